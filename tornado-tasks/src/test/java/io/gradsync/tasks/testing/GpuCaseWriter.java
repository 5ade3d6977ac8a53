package io.gradsync.tasks.testing;

import io.gradsync.tasks.api.Bfloat16Array;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.HalfArray;
import io.gradsync.tasks.api.KernelArray;
import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.KernelStyle;
import io.gradsync.tasks.compiler.ir.KernelParam;
import io.gradsync.tasks.kernels.BuiltinKernels;
import io.gradsync.tasks.kernels.KernelSources;
import io.gradsync.tasks.kernels.KernelSpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;

/**
 * Writes GPU check cases for machines that have a GPU but no JVM: the PTX module of all built-in
 * kernels, random inputs and the JVM reference outputs, read by {@code src/test/cuda/ptxrun.cu}.
 * Run with {@code -Dtest=GpuCaseWriter -Dgradsync.gpuCases=DIR}.
 */
class GpuCaseWriter {

    @Test
    @EnabledIfSystemProperty(named = "gradsync.gpuCases", matches = ".+")
    void writeCases() throws IOException {
        Path dir = Path.of(System.getProperty("gradsync.gpuCases"));
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("module.ptx"), KernelSources.allInOne(KernelSources.Target.PTX, 90));
        StringBuilder cases = new StringBuilder();
        Random rnd = new Random();
        int id = 0;
        for (KernelSpec spec : BuiltinKernels.all()) {
            CompiledKernel k = spec.compile();
            for (int n : new int[]{1, 20011}) {
                for (int threads : new int[]{(n + 255) / 256 * 256, 512}) {
                    if (k.style() == KernelStyle.CONTEXT) {
                        threads = Math.min(threads, 4096);
                    }
                    Object[] args = KernelArgs.forBuiltin(spec.name(), spec.method(), k, n, rnd);
                    Object[] expected = KernelArgs.deepCopy(args);
                    KernelArgs.runOnJvm(spec.method(), k, expected, threads, 256);
                    String c = "c" + (id++);
                    cases.append("CASE ").append(c).append('_').append(spec.name()).append("_n").append(n).append("_t").append(threads)
                            .append(' ').append(k.entryName()).append(' ').append(threads / 256).append(" 256\n");
                    for (KernelParam p : k.parameters()) {
                        Object arg = args[p.javaIndex()];
                        switch (p) {
                            case KernelParam.ArrayParam a -> {
                                KernelArray in = (KernelArray) arg;
                                String inFile = c + "_" + a.name() + ".in";
                                String exFile = c + "_" + a.name() + ".expect";
                                Files.write(dir.resolve(inFile), in.segment().toArray(ValueLayout.JAVA_BYTE));
                                Files.write(dir.resolve(exFile), ((KernelArray) expected[p.javaIndex()]).segment().toArray(ValueLayout.JAVA_BYTE));
                                String mode = switch (in) {
                                    case FloatArray f -> a.name().equals("result") ? "f32rel" : "f32";
                                    case HalfArray h -> "h16";
                                    case Bfloat16Array b -> "b16";
                                    default -> "bits";
                                };
                                cases.append("BUF ").append(inFile).append(' ').append(in.getSize()).append(' ').append(in.elementBytes())
                                        .append(' ').append(exFile).append(' ').append(mode).append('\n');
                            }
                            case KernelParam.ScalarParam s -> cases.append("F32 ")
                                    .append(Integer.toHexString(Float.floatToRawIntBits((Float) arg))).append('\n');
                            case KernelParam.ContextParam x -> {
                            }
                        }
                    }
                    cases.append("END\n");
                }
            }
        }
        Files.writeString(dir.resolve("cases.txt"), cases);
    }
}
