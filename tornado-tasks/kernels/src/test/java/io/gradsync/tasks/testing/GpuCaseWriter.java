package io.gradsync.tasks.testing;

import io.gradsync.tasks.compiler.access.KernelIrs;
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

import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.lang.reflect.Method;
import io.gradsync.tasks.api.IntArray;
import io.gradsync.tasks.api.LongArray;
import io.gradsync.tasks.compiler.KernelCompiler;

/**
 * Writes GPU check cases for machines that have a GPU but no JVM: the PTX module of all built-in
 * kernels, random inputs and the JVM reference outputs, read by {@code src/test/cuda/ptxrun.cu}.
 * Run its {@code main} with the module's test class path and a folder:
 * {@code java -cp tornado-tasks/target/test-classes:tornado-tasks/target/classes:... io.gradsync.tasks.testing.GpuCaseWriter DIR}.
 */
class GpuCaseWriter {

    private Path dir;
    private final StringBuilder cases = new StringBuilder();
    private int id;

    /** Writes the cases into the folder {@code args[0]}. A tool, not a test: it checks nothing itself. */
    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            throw new IllegalArgumentException("usage: GpuCaseWriter DIR");
        }
        new GpuCaseWriter().writeCases(Path.of(args[0]));
    }

    private void writeCases(Path into) throws Exception {
        dir = into;
        Files.createDirectories(dir);
        Class<?> features = Class.forName("io.gradsync.tasks.compiler.testing.FeatureKernels");
        List<CompiledKernel> all = new ArrayList<>(KernelSources.compileAll());
        Map<String, Method> featureMethods = new HashMap<>();
        for (Method m : features.getDeclaredMethods()) {
            if (java.lang.reflect.Modifier.isPublic(m.getModifiers())) {
                featureMethods.put(m.getName(), m);
                all.add(KernelCompiler.shared().compile(m));
            }
        }
        Files.writeString(dir.resolve("module.ptx"), KernelCompiler.ptxModule(all, 90));
        Random rnd = new Random();
        for (KernelSpec spec : BuiltinKernels.all()) {
            CompiledKernel k = spec.compile();
            for (int n : new int[]{1, 20011}) {
                for (int threads : new int[]{(n + 255) / 256 * 256, 512}) {
                    if (k.style() == KernelStyle.CONTEXT) {
                        threads = Math.min(threads, 4096);
                    }
                    writeCase(spec.name(), spec.method(), k, KernelArgs.forBuiltin(spec.name(), spec.method(), k, n, rnd), threads, false);
                }
            }
        }
        int n = 5000;
        IntArray ints = new IntArray(n);
        for (int i = 0; i < n; i++) {
            ints.set(i, switch (rnd.nextInt(6)) {
                case 0 -> Integer.MIN_VALUE + rnd.nextInt(3);
                case 1 -> Integer.MAX_VALUE - rnd.nextInt(3);
                case 2 -> rnd.nextInt(200) - 100;
                default -> rnd.nextInt();
            });
        }
        feature(featureMethods, "intOps", 256, false, ints, new IntArray(n), new LongArray(n));
        feature(featureMethods, "floatOps", 512, false, KernelArgs.random(FloatArray.class, n, rnd, 0), poisoned(n), new IntArray(n), new LongArray(n));
        for (int k : new int[]{0, 5, 40}) {
            feature(featureMethods, "loops", 512, false, KernelArgs.random(FloatArray.class, n, rnd, 0), poisoned(n), k);
        }
        feature(featureMethods, "contextStyle", 5120, false, null, KernelArgs.random(FloatArray.class, n, rnd, 0), poisoned(n), new IntArray(n));
        feature(featureMethods, "serial", 256, false, KernelArgs.random(FloatArray.class, n, rnd, 0), new FloatArray(1));
        feature(featureMethods, "halves", 1024, false, new HalfArray(n), new Bfloat16Array(n), new IntArray(n), KernelArgs.random(FloatArray.class, n, rnd, 0));
        FloatArray quarters = new FloatArray(n);
        for (int i = 0; i < n; i++) {
            quarters.set(i, (i % 17) * 0.25f);
        }
        feature(featureMethods, "atomics", 5120, false, null, quarters, new FloatArray(4), new IntArray(1));
        FloatArray edgy = new FloatArray(n);
        float[] edges = {Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, 3e9f, -3e9f, 1e20f, -1e20f, 65535.7f, -129.9f, -0f};
        for (int i = 0; i < n; i++) {
            edgy.set(i, rnd.nextBoolean() ? edges[rnd.nextInt(edges.length)] : (float) (rnd.nextGaussian() * 1e9));
        }
        feature(featureMethods, "conversions", 1024, false, edgy, new IntArray(n), new LongArray(n));
        FloatArray expIn = new FloatArray(n);
        for (int i = 0; i < n; i++) {
            expIn.set(i, (float) (rnd.nextDouble() * 52 - 26));
        }
        feature(featureMethods, "expKernel", 1024, true, expIn, poisoned(n));
        Files.writeString(dir.resolve("cases.txt"), cases);
    }

    private static FloatArray poisoned(int n) {
        FloatArray a = new FloatArray(n);
        KernelArgs.poison(a);
        return a;
    }

    private void feature(Map<String, Method> methods, String name, int threads, boolean ulp, Object... args) throws IOException {
        Method m = methods.get(name);
        writeCase(name, m, KernelCompiler.shared().compile(m), args, threads, ulp);
    }

    private void writeCase(String name, Method m, CompiledKernel k, Object[] args, int threads, boolean ulp) throws IOException {
        Object[] expected = KernelArgs.deepCopy(args);
        KernelArgs.runOnJvm(m, k, expected, threads, 256);
        String c = "c" + (id++);
        cases.append("CASE ").append(c).append('_').append(name).append("_t").append(threads)
                .append(' ').append(k.entryName()).append(' ').append(threads / 256).append(" 256\n");
        for (KernelParam p : KernelIrs.parameters(k)) {
            Object arg = args[p.javaIndex()];
            switch (p) {
                case KernelParam.ArrayParam a -> {
                    KernelArray in = (KernelArray) arg;
                    String inFile = c + "_" + a.name() + ".in";
                    String exFile = c + "_" + a.name() + ".expect";
                    Files.write(dir.resolve(inFile), in.segment().toArray(ValueLayout.JAVA_BYTE));
                    Files.write(dir.resolve(exFile), ((KernelArray) expected[p.javaIndex()]).segment().toArray(ValueLayout.JAVA_BYTE));
                    String mode = switch (in) {
                        case FloatArray f -> a.name().equals("result") ? "f32rel" : ulp ? "f32ulp" : "f32";
                        case HalfArray h -> "h16";
                        case Bfloat16Array b -> "b16";
                        default -> "bits";
                    };
                    cases.append("BUF ").append(inFile).append(' ').append(in.getSize()).append(' ').append(in.elementBytes())
                            .append(' ').append(exFile).append(' ').append(mode).append('\n');
                }
                case KernelParam.ScalarParam s -> cases.append(arg instanceof Float f
                        ? "F32 " + Integer.toHexString(Float.floatToRawIntBits(f)) : "I32 " + arg).append('\n');
                case KernelParam.ContextParam x -> {
                }
            }
        }
        cases.append("END\n");
    }
}
