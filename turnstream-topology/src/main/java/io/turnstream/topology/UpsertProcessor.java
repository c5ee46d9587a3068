package io.turnstream.topology;

import io.turnstream.model.StreamEvent;
import io.turnstream.model.WireFormat;
import io.turnstream.schema.SchemaRegistryException;
import io.turnstream.topology.TurnMachine.Rejection;
import java.io.IOException;
import java.time.Duration;
import java.util.function.Supplier;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.MDC;

/**
 * The Kafka Streams side of the topology: reads each raw record, hands the event to the
 * {@link TurnMachine} with the task's stores, forwards what it emits to the sinks, dead-letters what
 * cannot be read or applied, and drives the machine's ticks with one wall-clock punctuator.
 *
 * <p>State per turn is keyed by run id (the input key); a delta writes nothing but its text, into its
 * item's open chunk in memory, written to the store once per commit (see {@link ItemBuffer}).
 */
final class UpsertProcessor implements Processor<String, byte[], String, byte[]> {

    /** Turns and items kept deserialised per task (open ones and closed-turn markers are small). */
    private static final int MAX_CACHED_STATES = 50_000;

    private final TopologyConfig config;
    /** The pacing state the tasks of a stream thread share (commits are the thread's). */
    private final Supplier<BehindTasks> behindTasks;

    private ProcessorContext<String, byte[]> context;
    private TurnMachine machine;
    private DeadLetters deadLetters;
    private Sensor deadLetterCounter;
    /** Asks for the commits while the input is fresh; null when Kafka Streams' fixed interval alone commits. */
    private CommitPacer pacer;

    UpsertProcessor(TopologyConfig config) {
        this(config, BehindTasks::ofCurrentThread);
    }

    UpsertProcessor(TopologyConfig config, Supplier<BehindTasks> behindTasks) {
        this.config = config;
        this.behindTasks = behindTasks;
    }

    @Override
    public void init(ProcessorContext<String, byte[]> context) {
        this.context = context;
        KeyValueStore<Bytes, byte[]> chunks = context.getStateStore(UpsertTopology.CHUNKS_STORE);
        this.machine = new TurnMachine(config,
                new StateCache<>(context.getStateStore(UpsertTopology.TURNS_STORE), MAX_CACHED_STATES),
                new StateCache<>(context.getStateStore(UpsertTopology.ITEMS_STORE), MAX_CACHED_STATES),
                new ItemBuffer(chunks),
                new DeadlineQueue(context.getStateStore(UpsertTopology.DEADLINES_STORE)),
                (sink, record) -> {
                    context.forward(record, sink);
                    if (pacer != null) {
                        pacer.onOutput();
                    }
                },
                context::currentSystemTimeMs);
        deadLetterCounter = context.metrics().addRateTotalSensor(
                "turnstream", context.taskId().toString(), "dead-letter", Sensor.RecordingLevel.INFO);
        this.deadLetters = new DeadLetters(context, deadLetterCounter);
        if (config.commitPacing().adaptive()) {
            pacer = new CommitPacer(config.commitPacing(), context::currentSystemTimeMs, behindTasks);
            BeforeCommitStore.under(context.getStateStore(UpsertTopology.DEADLINES_STORE)).beforeCommit(pacer::onCommit);
        }
        context.schedule(Duration.ofMillis(config.punctuateIntervalMs()), PunctuationType.WALL_CLOCK_TIME, now -> {
            if (pacer != null) {
                pacer.onTick();
            }
            machine.onTick(now);
            requestCommitIfDue();
        });
    }

    @Override
    public void process(Record<String, byte[]> record) {
        if (pacer != null) {
            // asked now, the commit follows this batch of records (Kafka Streams checks after each)
            pacer.onRecord(record.timestamp());
            requestCommitIfDue();
        }
        StreamEvent event;
        try {
            event = read(record.value());
        } catch (SchemaRegistryException registryDown) {
            // the registry failed, not the record: the task fails and its replacement reads it again
            throw registryDown;
        } catch (IOException | RuntimeException e) {
            deadLetters.send(record, "unparseable StreamEvent: " + firstLine(e.getMessage()));
            return;
        }
        Rejection rejection = machine.onEvent(record.key(), event, record.headers(),
                context.recordMetadata().orElseThrow().offset());
        if (rejection == null) {
            return;
        }
        if (rejection.turnId() == null) {
            deadLetters.send(record, rejection.reason());
            return;
        }
        // The MDC only where the topology logs: set per record, it was a visible cost of every delta.
        MDC.put("turnId", rejection.turnId());
        try {
            deadLetters.send(record, rejection.reason());
        } finally {
            MDC.remove("turnId");
        }
    }

    /** A JSON delta through {@link DeltaReader}; every other event, and whatever it declines, in full. */
    private StreamEvent read(byte[] value) throws IOException {
        StreamEvent delta = config.wireFormat() == WireFormat.JSON ? DeltaReader.read(value) : null;
        return delta != null ? delta : config.wireFormat().read(config.topics().rawEvents(), value, StreamEvent.class);
    }

    private void requestCommitIfDue() {
        if (pacer != null && pacer.commitDue()) {
            context.commit();
        }
    }

    private static String firstLine(String message) {
        if (message == null) {
            return "no detail";
        }
        int newline = message.indexOf('\n');
        return newline < 0 ? message : message.substring(0, newline);
    }

    @Override
    public void close() {
        if (deadLetterCounter != null) {
            // The sensor is this task's: it goes with the task, as Streams' own task metrics do.
            context.metrics().removeSensor(deadLetterCounter);
            deadLetterCounter = null;
        }
        if (machine != null) {
            machine.close();
        }
        if (pacer != null) {
            pacer.close();
        }
    }
}
