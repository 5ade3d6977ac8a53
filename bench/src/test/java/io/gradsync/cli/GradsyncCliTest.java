package io.gradsync.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gradsync.sync.SyncBackend;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** Parsing, usage errors (one line, exit 2, naming the bad value) and help texts. */
class GradsyncCliTest {

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "bench --backend cpu,warp9 --devices 2          | 'warp9'",
        "bench --sizes 1M,12X                           | '12X'",
        "bench --sizes 0                                | '0'",
        "bench --dtype fp32,fp33                        | 'fp33'",
        "bench --devices 0                              | --devices",
        "bench --iters 0                                | --iters",
        "bench --plot out.jpg                           | out.jpg",
        "bench --runtime tpu                            | 'tpu'",
        "bench --frobnicate                             | --frobnicate",
        "bench --model resnet                           | 'resnet'",
        "bench --model mixed --model-size 12X           | '12X'",
        "bench --model mixed --model-size 1K            | --model-size",
        "bench --model mixed --tensors 0                | --tensors",
        "bench --model mixed --bucket 100               | --bucket",
        "bench --model mixed --bucket 1Q                | '1Q'",
        "bench --model mixed --model-seed x             | 'x'",
        "bench --tensors 50                             | --model",
        "bench --model mixed --sizes 1M                 | --sizes",
        "bench --model mixed --plot m.png               | --plot",
        "bench --reference /nonexistent/torch.txt       | '/nonexistent/torch.txt'",
        "bench --model mixed --reference torch.txt      | --reference",
        "compare --kernels average4,averageX            | 'averageX'",
        "compare --size 1Q                              | '1Q'",
        "kernels --emit sass --out /tmp/never-written   | 'sass'",
        "kernels --emit ptx                             | --out",
    })
    void badInputIsOneLineNamingTheValueWithExitCode2(String line, String named) {
        CliRun r = CliRun.of(line.trim().split("\\s+"));
        assertEquals(2, r.exitCode(), r.err());
        List<String> lines = r.err().lines().toList();
        assertEquals(1, lines.size(), "one line, got: " + r.err());
        assertTrue(lines.getFirst().startsWith("gradsync " + line.trim().split("\\s+")[0] + ": "), lines.getFirst());
        assertTrue(lines.getFirst().contains(named), "names " + named + ": " + lines.getFirst());
        assertEquals("", r.out(), "nothing measured or printed before the error");
    }

    @ParameterizedTest
    @ValueSource(strings = {"devices", "bench", "compare", "kernels", "train", "links"})
    void helpOfEachSubcommandShowsExamples(String command) {
        CliRun r = CliRun.of(command, "--help");
        assertEquals(0, r.exitCode(), r.err());
        assertEquals("", r.err(), "help formats cleanly (a bare % makes picocli warn)");
        String examples = r.out().substring(r.out().indexOf("Examples:"));
        assertTrue(examples.contains("gradsync " + command), r.out());
    }

    /** Issue 4: where libnccl.so.2 does not load, devices says so in one line, with the reason. */
    @Test
    void devicesSaysWhetherNcclLoads() {
        CliRun r = CliRun.of("devices");
        assertEquals(0, r.exitCode(), r.err());
        List<String> nccl = r.out().lines().filter(l -> l.startsWith("nccl: ")).toList();
        assertEquals(1, nccl.size(), r.out());
        if (!io.gradsync.nccl.Nccl.isAvailable()) {
            assertTrue(nccl.getFirst().startsWith("nccl: unavailable: ") && nccl.getFirst().contains("libnccl"), nccl.getFirst());
        } else {
            assertTrue(nccl.getFirst().matches("nccl: \\d+\\.\\d+\\.\\d+ \\(.+\\)"), nccl.getFirst());
        }
    }

    @Test
    void topLevelHelpListsEverySubcommand() {
        CliRun r = CliRun.of("--help");
        assertEquals(0, r.exitCode());
        for (String c : List.of("devices", "bench", "compare", "kernels", "train", "links")) {
            assertTrue(r.out().contains("  " + c + " "), c + " in " + r.out());
        }
    }

    @Test
    void allMeansEveryBackendThatAveragesThatManyReplicas() {
        assertEquals(List.of(SyncBackend.CPU, SyncBackend.PTX, SyncBackend.OPENCL, SyncBackend.NCCL),
                BenchCommand.chooseBackends("all", 4));
        assertEquals(List.of(SyncBackend.SINGLE), BenchCommand.chooseBackends("all", 1));
        assertEquals(List.of(SyncBackend.OPENCL, SyncBackend.CPU), BenchCommand.chooseBackends(" opencl, cpu-staging ,cpu", 2));
    }
}
