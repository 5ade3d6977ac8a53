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
        "kernels --emit ptx --out=                      | --out needs a folder name",
        "bench --backend single --devices 2             | --backend single takes exactly one device, got 2",
        "bench --json=                                  | --json needs a file name, got ''",
        "bench --plot=                                  | --plot needs a file name, got ''",
        "bench --dtype fp32,,bf16                       | --dtype: empty item in 'fp32,,bf16'",
        "bench --dtype fp32,                            | --dtype: empty item",
        "bench --backend cpu,,opencl                    | --backend: empty item in 'cpu,,opencl'",
        "bench --sizes 1M,,16M                          | --sizes: empty item in '1M,,16M'",
        "bench --sizes 99999999999999999999             | 8 EiB or more",
        "bench --chunk 1K                               | --chunk: ",
        "bench --slots 1                                | --slots: ",
        "bench --threads 0                              | --threads: ",
        "bench --opencl-step 100                        | --opencl-step: ",
        "links --repeats 0                              | --repeats must be at least 1, got 0",
        "links --repeats -1                             | --repeats must be at least 1, got -1",
        "links --size 1Q                                | --size: not a size: '1Q'",
        "links --runtime jvm --devices 0                | --devices must be at least 1",
        "train --steps 0                                | --steps must be at least 1",
        "train --steps x                                | 'x' is not an int",
        "train --max-norm -1                            | --max-norm must be a finite number >= 0",
        "train --max-norm NaN                           | --max-norm must be a finite number >= 0",
        "train --max-norm Infinity                      | --max-norm must be a finite number >= 0",
        "train --lr 0                                   | --lr must be a finite number > 0",
        "train --lr NaN                                 | --lr must be a finite number > 0",
        "train --batch 0                                | --batch must be at least 1",
        "train --samples -5                             | --samples must be at least 1",
        "train --runtime jvm --devices 0                | --devices must be at least 1",
        "train --runtime jvm --devices 3 --batch 10     | --batch 10 does not split evenly over 3",
        "train --layers 8,,4                            | --layers: empty item in '8,,4'",
        "train --layers 8,0,4                           | --layers: width 0",
        "train --layers 8                               | --layers: need features",
        "train --layers 8,x,4                           | 'x' is not a width",
        "train --optimizer rmsprop                      | 'rmsprop'",
        "train --dtype fp32,                            | --dtype: ",
        "train --bucket 1Q                              | --bucket: not a size: '1Q'",
        "train --bucket 1                               | --bucket: 1 is smaller",
        "train --backend cpu,,single                    | --backend: empty item",
        "train --backend single --runtime jvm --devices 2 | --backend single takes exactly one device, got 2",
        "train --runtime tpu                            | 'tpu'",
    })
    void badInputIsOneLineNamingTheValueWithExitCode2(String line, String named) {
        CliRun r = CliRun.of(line.trim().split("\\s+"));
        assertEquals(2, r.exitCode(), r.err());
        List<String> lines = r.err().lines().toList();
        assertEquals(1, lines.size(), "one line, got: " + r.err());
        String command = "gradsync " + line.trim().split("\\s+")[0];
        assertTrue(lines.getFirst().startsWith(command + ": "), lines.getFirst());
        assertTrue(lines.getFirst().endsWith(" (see " + command + " --help)"), "the way to the help: " + lines.getFirst());
        assertTrue(lines.getFirst().contains(named), "names " + named + ": " + lines.getFirst());
        assertEquals("", r.out(), "nothing measured or printed before the error");
    }

    /** Without CUDA, --runtime cuda says so instead of "--devices must be at least 1, got 0" (no --devices was given). */
    @ParameterizedTest
    @ValueSource(strings = {"bench", "train", "links"})
    void anUnavailableRuntimeIsNamedNotADeviceCountOfZero(String command) {
        org.junit.jupiter.api.Assumptions.assumeFalse(io.gradsync.tasks.cuda.CudaRuntime.status().available(), "CUDA is here");
        CliRun r = CliRun.of(command, "--runtime", "cuda");
        assertEquals(2, r.exitCode(), r.err());
        assertTrue(r.err().startsWith("gradsync " + command + ": --runtime cuda: unavailable here: "
                + io.gradsync.tasks.cuda.CudaRuntime.status().detail()), r.err());
        assertTrue(!r.err().contains("--devices"), r.err());
    }

    /** The version the build carries, in every way it runs (target/classes here; the jar's manifest for the launcher). */
    @Test
    void versionIsTheBuildsNotDev() {
        CliRun r = CliRun.of("--version");
        assertEquals(0, r.exitCode(), r.err());
        assertTrue(r.out().matches("gradsync \\d+\\.\\d+\\.\\d+(-SNAPSHOT)? on Java .*\\R"), r.out());
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
