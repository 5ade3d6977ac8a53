package io.gradsync.train;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gradsync.sync.DType;
import io.gradsync.sync.Gradient;
import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.SyncBackend;
import io.gradsync.sync.Synchronizers;
import io.gradsync.tasks.jvm.JvmBuffer;
import io.gradsync.tasks.jvm.JvmDevice;
import io.gradsync.tasks.jvm.JvmRuntime;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The backward kernels against central finite differences of a float64 forward pass written
 * here, independently of the kernels: the data-parallel tests prove consistency, this proves
 * that the gradients are the loss's.
 */
class MlpGradientCheckTest {

    @Test
    void backwardKernelsGiveTheDerivativeOfTheLoss() {
        SyntheticData data = SyntheticData.generate(5, 64, 6, 4);
        List<Integer> layers = List.of(6, 9, 7, 4);
        var config = new DataParallelTrainer.Config(layers, 16, DType.FP32, DataParallelTrainer.Optimizer.SGD, 0.1f,
                1 << 20, 0, 42);
        List<JvmDevice> devices = JvmRuntime.createDevices(1);
        try (GradientSynchronizer none = Synchronizers.create(SyncBackend.SINGLE, devices);
                DataParallelTrainer t = new DataParallelTrainer(devices, none, config)) {
            List<double[]> params = new ArrayList<>();
            for (String p : t.parameters()) {
                float[] f = t.parameter(0, p);
                double[] d = new double[f.length];
                for (int i = 0; i < f.length; i++) {
                    d[i] = f[i];
                }
                params.add(d);
            }
            double reported = t.step(data).loss(); // gradients of step 0 stay in the buckets
            assertEquals(loss(layers, params, data, 16), reported, 1e-5, "forward loss");
            SplittableRandom random = new SplittableRandom(1);
            int checked = 0;
            for (int p = 0; p < params.size(); p++) {
                Gradient g = t.gradient(0, t.parameters().get(p));
                var seg = ((JvmBuffer) g.buffer()).segment();
                double[] w = params.get(p);
                for (int k = 0; k < Math.min(w.length, 12); k++) {
                    int i = random.nextInt(w.length);
                    double h = 1e-4;
                    double saved = w[i];
                    w[i] = saved + h;
                    double up = loss(layers, params, data, 16);
                    w[i] = saved - h;
                    double down = loss(layers, params, data, 16);
                    w[i] = saved;
                    double numeric = (up - down) / (2 * h);
                    double analytic = seg.getAtIndex(ValueLayout.JAVA_FLOAT, g.byteOffset() / 4 + i);
                    assertEquals(numeric, analytic, 1e-3 * Math.abs(numeric) + 2e-5,
                            t.parameters().get(p) + "[" + i + "]");
                    checked++;
                }
            }
            assertTrue(checked > 50);
        } finally {
            devices.forEach(JvmDevice::close);
        }
    }

    /** Mean cross-entropy of batch 0 in float64; ReLU on hidden layers. params: w0, b0, w1, b1, ... */
    static double loss(List<Integer> layers, List<double[]> params, SyntheticData data, int batch) {
        double total = 0;
        for (int r = 0; r < batch; r++) {
            int row = data.row(0, batch, r);
            double[] a = new double[layers.getFirst()];
            for (int f = 0; f < a.length; f++) {
                a[f] = data.feature(row, f);
            }
            for (int l = 0; l + 1 < layers.size(); l++) {
                double[] w = params.get(2 * l);
                double[] b = params.get(2 * l + 1);
                double[] next = new double[layers.get(l + 1)];
                for (int o = 0; o < next.length; o++) {
                    double acc = b[o];
                    for (int k = 0; k < a.length; k++) {
                        acc += a[k] * w[o * a.length + k];
                    }
                    next[o] = l + 2 < layers.size() ? Math.max(0, acc) : acc;
                }
                a = next;
            }
            double max = Double.NEGATIVE_INFINITY;
            for (double z : a) {
                max = Math.max(max, z);
            }
            double sum = 0;
            for (double z : a) {
                sum += Math.exp(z - max);
            }
            total += Math.log(sum) - (a[data.label(row)] - max);
        }
        return total / batch;
    }
}
