package io.gradsync.train;

import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.IntArray;
import io.gradsync.tasks.api.Parallel;

/**
 * The kernels of a multi-layer perceptron classifier: forward, softmax cross-entropy, backward
 * and the optimizer updates, as plain Java that runs on JVM devices and compiles to PTX and
 * OpenCL C. Matrices are row-major; a batch of {@code rows} samples of {@code dim} features is a
 * {@code rows * dim} array, a weight is {@code outDim * inDim} (one row per output).
 *
 * <p>Each kernel has one {@code @Parallel} loop over its first array (the launch covers it), and
 * every sum runs over one index in ascending order in fp32, so a result depends only on its
 * inputs, never on the launch: what makes one replica and N replicas comparable step by step.
 *
 * <p>Thread-safety: stateless static methods, callable from any thread at once.
 */
public final class MlpKernels {
    private MlpKernels() {
    }

    /** {@code out = in * w^T + b}, then ReLU when {@code relu != 0}. */
    public static void linear(FloatArray out, FloatArray in, FloatArray w, FloatArray b, int inDim, int outDim, int relu) {
        for (@Parallel int idx = 0; idx < out.getSize(); idx++) {
            int row = idx / outDim;
            int o = idx - row * outDim;
            float acc = b.get(o);
            for (int k = 0; k < inDim; k++) {
                acc += in.get(row * inDim + k) * w.get(o * inDim + k);
            }
            if (relu != 0 && acc < 0f) {
                acc = 0f;
            }
            out.set(idx, acc);
        }
    }

    /**
     * Softmax cross-entropy: {@code dLogits = (softmax(logits) - onehot(label)) * gradScale} and the
     * probability of the true class per row (the host takes its log: the loss is only reported).
     */
    public static void softmaxCrossEntropy(FloatArray probTrue, FloatArray dLogits, FloatArray logits, IntArray labels,
            int classes, float gradScale) {
        for (@Parallel int row = 0; row < probTrue.getSize(); row++) {
            int base = row * classes;
            float max = logits.get(base);
            for (int c = 1; c < classes; c++) {
                max = Math.max(max, logits.get(base + c));
            }
            float sum = 0f;
            for (int c = 0; c < classes; c++) {
                sum += (float) Math.exp(logits.get(base + c) - max);
            }
            int label = labels.get(row);
            for (int c = 0; c < classes; c++) {
                float p = (float) Math.exp(logits.get(base + c) - max) / sum;
                float g = p;
                if (c == label) {
                    g = p - 1f;
                    probTrue.set(row, p);
                }
                dLogits.set(base + c, g * gradScale);
            }
        }
    }

    /** {@code gw[o, k] = sum over rows of delta[r, o] * in[r, k]}. */
    public static void weightGrad(FloatArray gw, FloatArray delta, FloatArray in, int rows, int inDim, int outDim) {
        for (@Parallel int idx = 0; idx < gw.getSize(); idx++) {
            int o = idx / inDim;
            int k = idx - o * inDim;
            float acc = 0f;
            for (int r = 0; r < rows; r++) {
                acc += delta.get(r * outDim + o) * in.get(r * inDim + k);
            }
            gw.set(idx, acc);
        }
    }

    /** {@code gb[o] = sum over rows of delta[r, o]}. */
    public static void biasGrad(FloatArray gb, FloatArray delta, int rows, int outDim) {
        for (@Parallel int o = 0; o < gb.getSize(); o++) {
            float acc = 0f;
            for (int r = 0; r < rows; r++) {
                acc += delta.get(r * outDim + o);
            }
            gb.set(o, acc);
        }
    }

    /**
     * Gradient into the previous layer through its ReLU: {@code dIn = delta * w}, zero where the
     * previous layer's output {@code act} was clipped ({@code act <= 0}).
     */
    public static void inputGrad(FloatArray dIn, FloatArray delta, FloatArray w, FloatArray act, int inDim, int outDim) {
        for (@Parallel int idx = 0; idx < dIn.getSize(); idx++) {
            int row = idx / inDim;
            int k = idx - row * inDim;
            float acc = 0f;
            if (act.get(idx) > 0f) {
                for (int o = 0; o < outDim; o++) {
                    acc += delta.get(row * outDim + o) * w.get(o * inDim + k);
                }
            }
            dIn.set(idx, acc);
        }
    }

    /** SGD: {@code w -= hyper[0] * g} ({@code hyper[0]} is the learning rate, set per step). */
    public static void sgd(FloatArray w, FloatArray g, FloatArray hyper) {
        for (@Parallel int i = 0; i < w.getSize(); i++) {
            w.set(i, w.get(i) - hyper.get(0) * g.get(i));
        }
    }

    /**
     * Adam. {@code hyper = [lr, beta1, beta2, eps, 1 / (1 - beta1^t), 1 / (1 - beta2^t)]}, set by
     * the host each step (graph arguments are fixed when the graph is built; arrays are not).
     */
    public static void adam(FloatArray w, FloatArray g, FloatArray m, FloatArray v, FloatArray hyper) {
        for (@Parallel int i = 0; i < w.getSize(); i++) {
            float grad = g.get(i);
            float mi = hyper.get(1) * m.get(i) + (1f - hyper.get(1)) * grad;
            float vi = hyper.get(2) * v.get(i) + (1f - hyper.get(2)) * grad * grad;
            m.set(i, mi);
            v.set(i, vi);
            float mHat = mi * hyper.get(4);
            float vHat = vi * hyper.get(5);
            w.set(i, w.get(i) - hyper.get(0) * mHat / ((float) Math.sqrt(vHat) + hyper.get(3)));
        }
    }
}
