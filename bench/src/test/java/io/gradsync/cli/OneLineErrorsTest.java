package io.gradsync.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gradsync.tasks.cuda.CudaRuntime;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Bad requests answer in one line on stderr with exit code 2, before anything is measured or
 * allocated, and say why.
 */
class OneLineErrorsTest {

    static Stream<Arguments> badRequests() {
        return Stream.of(
                Arguments.of(new String[] {"train", "--bucket", "1", "--steps", "1"}, "--bucket: 1 is smaller"),
                Arguments.of(new String[] {"bench", "--backend", "cpu", "--sizes", "1K", "--json", "/nonexistent-gradsync/x.json"},
                        "the folder /nonexistent-gradsync does not exist"),
                Arguments.of(new String[] {"bench", "--backend", "cpu", "--sizes", "1K", "--plot", "/proc/x.png"}, "cannot write in /proc ("),
                Arguments.of(new String[] {"kernels", "--emit", "ptx", "--out", "/proc/k"}, "cannot write in /proc ("),
                Arguments.of(new String[] {"bench", "--backend", "cpu", "--sizes", "9223372036854775807"}, "more than 8 EiB of host memory"),
                // the size as given, not rounded through a double to 8388608T
                Arguments.of(new String[] {"bench", "--backend", "cpu", "--devices", "2", "--sizes", "9223372036854775807"},
                        "--sizes 9223372036854775807 on 2 devices needs"),
                Arguments.of(new String[] {"bench", "--backend", "cpu", "--sizes", "1099511627776"}, "of host memory; this machine has"),
                Arguments.of(new String[] {"links", "--runtime", "jvm", "--size", "1099511627776"}, "of host memory; this machine has"),
                Arguments.of(new String[] {"bench", "--backend", "cpu", "--devices", "1000", "--sizes", "1K"}, "on 1000 devices needs about"),
                Arguments.of(new String[] {"compare", "--forms", "jvm", "--cpu-size", "3"}, "--cpu-size: 3 B holds no element"),
                Arguments.of(new String[] {"compare", "--forms", "jvm", "--kernels", "average4,"}, "--kernels: empty item in 'average4,'"));
    }

    @ParameterizedTest
    @MethodSource("badRequests")
    void answersInOneLineBeforeWorking(String[] args, String reason) {
        CliRun r = CliRun.of(args);
        assertEquals(2, r.exitCode(), r.out() + r.err());
        assertEquals(1, r.err().lines().count(), r.err());
        assertTrue(r.err().contains(reason), r.err());
        assertTrue(r.out().isBlank(), "nothing measured first: " + r.out());
        assertFalse(Files.exists(Path.of("/nonexistent-gradsync")), "no folder is created for --json");
    }

    @Test
    void linksSaysWhyCudaIsMissing() {
        assumeTrue(!CudaRuntime.status().available(), "CUDA is here");
        CliRun r = CliRun.of("links", "--runtime", "cuda");
        assertEquals(2, r.exitCode());
        assertTrue(r.err().contains(CudaRuntime.status().detail()), r.err());
    }

    @Test
    void everySubcommandPrintsItsVersion() {
        for (String c : new String[] {"bench", "devices", "compare", "kernels", "train", "links"}) {
            CliRun r = CliRun.of(c, "-V");
            assertEquals(0, r.exitCode(), c);
            assertTrue(r.out().startsWith("gradsync "), c + ": " + r.out());
        }
    }

    @Test
    void benchHelpSaysWhatTheLauncherSets() {
        assertTrue(CliRun.of("bench", "--help").out().contains("as many as --devices, 4 by default"));
    }

    @Test
    void aJsonInAFolderThatExistsIsWritten(@TempDir Path dir) {
        CliRun r = CliRun.of("bench", "--backend", "cpu", "--devices", "2", "--sizes", "4K", "--iters", "2", "--warmup", "1",
                "--no-bounds", "--json", dir.resolve("b.json").toString());
        assertEquals(0, r.exitCode(), r.err());
        assertTrue(Files.exists(dir.resolve("b.json")));
    }
}
