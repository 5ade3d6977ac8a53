package io.gradsync.tasks.kernels.internal;

import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.compiler.KernelStyle;
import io.gradsync.tasks.compiler.LaunchShape;
import io.gradsync.tasks.kernels.BuiltinKernels;
import io.gradsync.tasks.kernels.KernelSpec;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class JvmKernelsTest {

    @Test
    void launchShapes() {
        assertEquals(new LaunchShape(4, 256), LaunchShape.forWork(KernelStyle.PARALLEL_LOOP, 1000, 0));
        assertEquals(new LaunchShape(1, 256), LaunchShape.forWork(KernelStyle.PARALLEL_LOOP, 1, 0));
        assertEquals(BuiltinKernels.REDUCTION_THREADS / 256, BuiltinKernels.byName("sumOfSquares").orElseThrow().launchShape(100_000_000).grid(),
                "reductions are bounded");
        assertEquals(new LaunchShape(1, 32), LaunchShape.forWork(KernelStyle.SERIAL, 5000, 0));
    }

    @Test
    void contextKernelSpreadOverWorkersMatchesFloat64() {
        int n = 300_001;
        Random rnd = new Random();
        try (FloatArray x = new FloatArray(n); FloatArray result = new FloatArray(1)) {
            double exact = 0;
            for (int i = 0; i < n; i++) {
                float v = (float) rnd.nextGaussian();
                x.set(i, v);
                exact += (double) v * v;
            }
            KernelSpec spec = BuiltinKernels.byName("sumOfSquares").orElseThrow();
            LaunchShape shape = spec.launchShape(n);
            JvmKernels.run(spec, shape.globalSize(), shape.block(), x, result);
            // 65536 fp32 partials added atomically: ~sqrt(65536) roundings of 2^-24, so 1e-4 relative
            assertTrue(Math.abs(result.get(0) - exact) <= 1e-4 * exact, result.get(0) + " vs " + exact);
        }
    }

    @Test
    void loopKernelRunsOnce() {
        try (FloatArray out = new FloatArray(3); FloatArray a = FloatArray.of(1, 2, 3); FloatArray b = FloatArray.of(3, 4, 5)) {
            JvmKernels.run(BuiltinKernels.average(2), 256, 256, out, a, b, 2f);
            assertEquals(2f, out.get(0));
            assertEquals(4f, out.get(2));
            assertThrows(IllegalArgumentException.class, () -> JvmKernels.run(BuiltinKernels.average(2), 256, 256, out, a));
        }
    }
}
