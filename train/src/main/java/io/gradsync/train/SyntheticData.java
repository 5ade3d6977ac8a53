package io.gradsync.train;

import java.util.SplittableRandom;

/**
 * A seeded classification data set: {@code classes} Gaussian clusters in {@code features}
 * dimensions, centers drawn once, each sample its center plus unit noise. Learnable, but not
 * linearly trivial when the centers are close relative to the noise.
 *
 * <p>Thread-safety: immutable once made; read it from any thread.
 */
public final class SyntheticData {
    private final int features;
    private final int classes;
    private final float[] x;
    private final int[] y;

    private SyntheticData(int features, int classes, float[] x, int[] y) {
        this.features = features;
        this.classes = classes;
        this.x = x;
        this.y = y;
    }

    public static SyntheticData generate(long seed, int samples, int features, int classes) {
        if (samples < 1 || features < 1 || classes < 2) {
            throw new IllegalArgumentException("need samples >= 1, features >= 1, classes >= 2; got "
                    + samples + ", " + features + ", " + classes);
        }
        if ((long) samples * features > Integer.MAX_VALUE) { // the samples' features are one array
            throw new IllegalArgumentException(samples + " samples x " + features + " features are more than an array holds (2^31 - 1)");
        }
        SplittableRandom random = new SplittableRandom(seed);
        float[][] centers = new float[classes][features];
        for (float[] c : centers) {
            for (int f = 0; f < features; f++) {
                c[f] = (float) gaussian(random) * 0.4f;
            }
        }
        float[] x = new float[samples * features];
        int[] y = new int[samples];
        for (int s = 0; s < samples; s++) {
            y[s] = random.nextInt(classes);
            for (int f = 0; f < features; f++) {
                x[s * features + f] = centers[y[s]][f] + (float) gaussian(random);
            }
        }
        return new SyntheticData(features, classes, x, y);
    }

    private static double gaussian(SplittableRandom random) {
        // Box-Muller: SplittableRandom has no nextGaussian with a fixed algorithm across JDKs
        double u = 1.0 - random.nextDouble();
        return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random.nextDouble());
    }

    public int features() {
        return features;
    }

    public int classes() {
        return classes;
    }

    public int samples() {
        return y.length;
    }

    /** Global row {@code i} of the batch of step {@code step}: the data set cycled in order. */
    public int row(int step, int batch, int i) {
        return (int) (((long) step * batch + i) % y.length);
    }

    public float feature(int sample, int f) {
        return x[sample * features + f];
    }

    public int label(int sample) {
        return y[sample];
    }
}
