package io.gradsync.tasks.kernels.launch;

import io.gradsync.tasks.compiler.access.KernelIrs;
import io.gradsync.tasks.kernels.KernelSpec;
import io.gradsync.tasks.kernels.BuiltinKernels;
import io.gradsync.tasks.api.KernelArray;
import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.KernelCompiler;
import io.gradsync.tasks.compiler.KernelStyle;
import io.gradsync.tasks.compiler.LaunchShape;
import io.gradsync.tasks.compiler.ir.KernelParam;
import io.gradsync.tasks.testing.BuiltinDifferential;
import io.gradsync.tasks.testing.KernelArgs;
import io.gradsync.tasks.testing.PtxInterpreter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The vector form's structure checked without a GPU: generated PTX, scalar and vector, run by
 * {@link PtxInterpreter} against the Java method, bit for bit, for lengths around the vector
 * width (empty, shorter than one group, with and without a tail) and for launches of one thread
 * per element (shrunk as {@code CudaKernels.prepare} does), a single small group and a few groups
 * striding. The interpreter also fails any access outside the arrays or a misaligned vector
 * access. The GPU runs the same kernels in {@code CudaDifferentialTest}.
 */
class PtxVectorSemanticsTest {
    private static final long BASE = 0x10_0000_0000L;
    private static final int[] LENGTHS = {0, 1, 2, 3, 5, 7, 8, 9, 16, 17, 100, 1003};

    static Stream<KernelSpec> elementwiseKernels() {
        return BuiltinKernels.all().stream().filter(k -> k.compile().isElementwise());
    }

    private static List<LaunchShape> shapes(int n) {
        return List.of(LaunchShape.forWork(KernelStyle.PARALLEL_LOOP, n, 0), new LaunchShape(1, 32), new LaunchShape(3, 64));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("elementwiseKernels")
    void bothFormsMatchJava(KernelSpec spec) {
        CompiledKernel k = spec.compile();
        Method m = spec.method();
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        Set<String> nc = Set.copyOf(k.readOnlyArrays());
        for (int n : LENGTHS) {
            for (LaunchShape shape : shapes(n)) {
                for (int sm : new int[]{75, 90}) {
                    Object[] args = KernelArgs.forBuiltin(spec.name(), m, k, n, rnd);
                    Object[] expected = KernelArgs.deepCopy(args);
                    KernelArgs.runOnJvm(m, k, expected, (int) shape.globalSize(), shape.block());
                    for (boolean vectorized : new boolean[]{false, true}) {
                        Object[] actual = KernelArgs.deepCopy(args);
                        LaunchShape launched = vectorized ? VectorLaunches.shape(shape, n, k.vectorWidth()) : shape;
                        interpret(k, k.ptx(sm, nc, vectorized), actual, launched, 0);
                        compare(m, expected, actual, spec.name() + (vectorized ? " vector" : " scalar") + " sm_" + sm
                                + " n=" + n + " " + launched + " seed=" + seed);
                    }
                }
            }
        }
    }

    /** In place ({@code out} the same memory as {@code a0}): each lane reads its element before any store. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"average2", "average3Bf16", "average2F16", "sumIntoBf16"})
    void inPlaceMatchesJava(String name) {
        KernelSpec spec = BuiltinKernels.byName(name).orElseThrow();
        CompiledKernel k = spec.compile();
        Random rnd = new Random(7);
        for (int n : LENGTHS) {
            Object[] args = KernelArgs.forBuiltin(name, spec.method(), k, n, rnd);
            args[0] = args[1]; // out = a0 (sumInto: acc = x)
            Object[] expected = KernelArgs.deepCopy(args);
            expected[0] = expected[1];
            KernelArgs.runOnJvm(spec.method(), k, expected, 256, 64);
            Object[] actual = KernelArgs.deepCopy(args);
            actual[0] = actual[1];
            // the runtime loads a0 plainly then: it overlaps out
            Set<String> nc = Set.of();
            interpret(k, k.ptx(90, nc, true), actual, new LaunchShape(2, 64), 0);
            compare(spec.method(), expected, actual, name + " in place n=" + n);
        }
    }

    /** The hand-written element-wise shapes of the analysis test, with their own argument kinds. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"yesScalarBound", "yesLocalBound", "yesIndexAsValue", "yesInlinedCall", "yesLocalReassigned",
            "yesDoubles", "yesRawBits", "yesReadModifyWrite", "yesFill"})
    void handWrittenShapesMatchJava(String name) throws Exception {
        Class<?> shapes = Class.forName("io.gradsync.tasks.compiler.testing.ElementwiseShapes");
        CompiledKernel k = new KernelCompiler().compile(shapes, name);
        Method m = k.owner().getDeclaredMethod(name, methodTypes(shapes, name));
        Random rnd = new Random(11);
        for (int n : LENGTHS) {
            for (LaunchShape shape : shapes(n)) {
                Object[] args = new Object[m.getParameterCount()];
                for (int i = 0; i < args.length; i++) {
                    Class<?> t = m.getParameterTypes()[i];
                    args[i] = t == int.class ? (Object) n : t == float.class ? (Object) 0.75f : KernelArgs.random(t, n, rnd, 0.01);
                }
                Object[] expected = KernelArgs.deepCopy(args);
                KernelArgs.runOnJvm(m, k, expected, 0, 0);
                for (boolean vectorized : new boolean[]{false, true}) {
                    Object[] actual = KernelArgs.deepCopy(args);
                    LaunchShape launched = vectorized ? VectorLaunches.shape(shape, n, k.vectorWidth()) : shape;
                    interpret(k, k.ptx(90, Set.of(), vectorized), actual, launched, 0);
                    compare(m, expected, actual, name + (vectorized ? " vector" : " scalar") + " n=" + n + " " + launched);
                }
            }
        }
    }

    private static Class<?>[] methodTypes(Class<?> owner, String name) {
        for (Method m : owner.getDeclaredMethods()) {
            if (m.getName().equals(name)) {
                return m.getParameterTypes();
            }
        }
        throw new IllegalArgumentException(name);
    }

    /** The interpreter is strict: the vector form on arrays one element off faults, the scalar form does not. */
    @Test
    void misalignedVectorAccessFaults() {
        KernelSpec spec = BuiltinKernels.byName("average2Bf16").orElseThrow();
        CompiledKernel k = spec.compile();
        Object[] args = KernelArgs.forBuiltin(spec.name(), spec.method(), k, 100, new Random(3));
        Object[] expected = KernelArgs.deepCopy(args);
        KernelArgs.runOnJvm(spec.method(), k, expected, 128, 64);
        AssertionError e = assertThrows(AssertionError.class,
                () -> interpret(k, k.ptx(90, Set.of(), true), KernelArgs.deepCopy(args), new LaunchShape(2, 64), 2));
        assertTrue(e.getMessage().contains("misaligned"), e.getMessage());
        Object[] actual = KernelArgs.deepCopy(args);
        interpret(k, k.ptx(90, Set.of(), false), actual, new LaunchShape(2, 64), 2);
        compare(spec.method(), expected, actual, "scalar form on shifted arrays");
    }

    /**
     * Runs {@code ptx} with {@code args}: every array copied to its own 256-byte aligned address
     * plus {@code shift} bytes (one array passed twice shares its memory), scalars by value; the
     * arrays are updated in place.
     */
    static void interpret(CompiledKernel k, String ptx, Object[] args, LaunchShape shape, long shift) {
        PtxInterpreter interpreter = new PtxInterpreter(ptx);
        PtxInterpreter.Memory memory = new PtxInterpreter.Memory();
        Map<KernelArray, Long> addresses = new IdentityHashMap<>();
        Map<KernelArray, byte[]> contents = new IdentityHashMap<>();
        List<Long> params = new ArrayList<>();
        long next = BASE;
        for (KernelParam p : KernelIrs.parameters(k)) {
            Object arg = args[p.javaIndex()];
            switch (p) {
                case KernelParam.ArrayParam a -> {
                    KernelArray array = (KernelArray) arg;
                    Long at = addresses.get(array);
                    if (at == null) {
                        byte[] bytes = array.segment().toArray(ValueLayout.JAVA_BYTE);
                        at = next + shift;
                        memory.map(at, bytes);
                        addresses.put(array, at);
                        contents.put(array, bytes);
                        next = (at + bytes.length + 256 + 255) & ~255L; // a gap: an overrun is not the next array
                    }
                    params.add(at);
                    params.add((long) array.getSize());
                }
                case KernelParam.ScalarParam s -> params.add(switch (s.type()) {
                    case I32 -> ((Number) arg).intValue() & 0xFFFF_FFFFL;
                    case I64 -> ((Number) arg).longValue();
                    case F32 -> Float.floatToRawIntBits(((Number) arg).floatValue()) & 0xFFFF_FFFFL;
                    case F64 -> Double.doubleToRawLongBits(((Number) arg).doubleValue());
                });
                case KernelParam.ContextParam c -> {
                }
            }
        }
        interpreter.run(memory, params.stream().mapToLong(Long::longValue).toArray(), shape.grid(), shape.block());
        contents.forEach((array, bytes) -> array.segment().copyFrom(MemorySegment.ofArray(bytes)));
    }

    private static void compare(Method m, Object[] expected, Object[] actual, String where) {
        for (int i = 0; i < expected.length; i++) {
            if (expected[i] instanceof KernelArray e) {
                KernelArray a = (KernelArray) actual[i];
                assertEquals(e.getSize(), a.getSize());
                int diff = KernelArgs.firstDifference(e, a);
                if (diff >= 0) {
                    fail(where + ": parameter " + m.getParameters()[i].getName() + " differs at " + diff + ": Java "
                            + BuiltinDifferential.floatAt(e, diff) + " vs PTX " + BuiltinDifferential.floatAt(a, diff));
                }
            }
        }
    }
}
