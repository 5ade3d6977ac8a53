package io.gradsync.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gradsync.bench.NvccReference;
import io.gradsync.tasks.cuda.CudaRuntime;
import java.nio.file.Path;
import java.util.Optional;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** On a CUDA machine: compare fills the PTX (and nvcc) columns with checked figures; bench --backend all plots every backend. */
@Tag("gpu")
class GpuCompareAndBenchTest {

    @Test
    void compareTimesGeneratedPtxBesideNvccAndChecksBoth() {
        CliRun r = CliRun.of("compare", "--kernels", "average4,average4Bf16,sumInto,sumOfSquaresPartials,f32ToBf16",
                "--size", "64M", "--cpu-size", "1M", "--warmup", "2", "--iters", "5");
        assertEquals(0, r.exitCode(), r.out() + r.err());
        boolean nvcc = NvccReference.find().isPresent();
        for (String kernel : new String[] {"average4", "average4Bf16", "sumInto", "sumOfSquaresPartials", "f32ToBf16"}) {
            Optional<String> row = r.out().lines().filter(l -> l.startsWith(" " + kernel + " ")).findFirst();
            assertTrue(row.isPresent(), kernel + " in " + r.out());
            assertTrue(row.get().endsWith("  ok"), row.get());
            String ptxCell = row.get().substring(28, 49).trim();
            assertTrue(ptxCell.endsWith("%"), "ptx figure for " + kernel + ": " + row.get());
            if (nvcc) {
                assertTrue(row.get().substring(49, 70).trim().endsWith("%"), "nvcc figure: " + row.get());
            }
        }
    }

    @Test
    void benchAllOnTheGpusWritesJsonAndPlot(@TempDir Path dir) throws Exception {
        int gpus = Math.min(4, CudaRuntime.devices().size());
        CliRun r = CliRun.of("bench", "--backend", "all", "--devices", Integer.toString(gpus), "--sizes", "1M,16M",
                "--dtype", "fp32,bf16", "--iters", "5", "--json", dir.resolve("b.json").toString(),
                "--plot", dir.resolve("b.png").toString());
        assertEquals(0, r.exitCode(), r.out() + r.err());
        // 'all' is every backend that can average this many replicas: single alone on one GPU
        for (String backend : gpus == 1 ? new String[] {"single"} : new String[] {"cpu", "ptx", "opencl"}) {
            assertTrue(r.out().contains("# backend " + backend + " "), backend + " in " + r.out());
        }
        assertNotNull(ImageIO.read(dir.resolve("b.png").toFile()));
    }
}
