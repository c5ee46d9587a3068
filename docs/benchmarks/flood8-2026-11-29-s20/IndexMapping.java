import java.io.File;
import java.io.RandomAccessFile;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;

/**
 * What a broker does when it creates a segment's index (AbstractIndex): a new file set to its full size
 * (segment.index.bytes, sparse), mapped into memory, then its first entry written. Times each step per file.
 * Usage: java IndexMapping.java SIZE_BYTES FILES DIR
 */
public class IndexMapping {
    public static void main(String[] args) throws Exception {
        int size = Integer.parseInt(args[0]);
        int files = Integer.parseInt(args[1]);
        File dir = new File(args[2]);
        dir.mkdirs();
        long create = 0, map = 0, firstEntry = 0;
        for (int i = 0; i < files; i++) {
            File file = new File(dir, i + "-" + System.nanoTime() + ".index");
            long t0 = System.nanoTime();
            file.createNewFile();
            try (RandomAccessFile raf = new RandomAccessFile(file, "rw")) {
                raf.setLength(size);
                long t1 = System.nanoTime();
                MappedByteBuffer mmap = raf.getChannel().map(FileChannel.MapMode.READ_WRITE, 0, size);
                long t2 = System.nanoTime();
                mmap.putLong(0, 42L);
                mmap.putInt(8, 1);
                long t3 = System.nanoTime();
                create += t1 - t0;
                map += t2 - t1;
                firstEntry += t3 - t2;
            }
        }
        System.out.printf("size %d, %d files: create %.2f ms, map %.2f ms, first entry %.2f ms (per file)%n",
                size, files, create / 1e6 / files, map / 1e6 / files, firstEntry / 1e6 / files);
    }
}
