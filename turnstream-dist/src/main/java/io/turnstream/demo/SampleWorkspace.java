package io.turnstream.demo;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** The small directory the demo's tool executor works in: a README and a couple of files to read. */
final class SampleWorkspace {

    static final String README = """
            # Rocket club flight log

            This workspace was made by `turnstream demo`. The tool executor runs the model's tool calls
            (list_files, read_file, glob, grep, write_file, edit_file) inside it and nowhere else.

            - flights.csv: every launch of the season, with apogee and outcome
            - notes/next-launch.md: the plan for Saturday's launch
            """;

    private SampleWorkspace() {
    }

    static Path create(Path dir) throws IOException {
        Files.createDirectories(dir.resolve("notes"));
        Files.writeString(dir.resolve("README.md"), README);
        Files.writeString(dir.resolve("flights.csv"), """
                date,rocket,motor,apogee_m,outcome
                2025-03-08,Comet,C6-5,212,recovered
                2025-04-12,Comet,C6-5,198,recovered
                2025-05-17,Nimbus,D12-5,341,parachute tangled
                2025-06-21,Nimbus,E12-6,455,recovered
                """);
        Files.writeString(dir.resolve("notes").resolve("next-launch.md"), """
                # Saturday launch

                Fly Nimbus on an E12-6 again; pack the parachute looser than in May.
                Wind limit: 20 km/h. Bring spare igniters.
                """);
        return dir;
    }
}
