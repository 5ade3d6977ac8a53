package io.gradsync.sync.bucket;

import io.gradsync.sync.DType;
import io.gradsync.tasks.device.Device;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.SplittableRandom;

/**
 * The parameter list of a synthetic model, for benchmarks and tests of {@link GradientBuckets}:
 * one {@code embedding.weight} holding about a quarter of the elements (token embeddings of
 * GPT-2 and BERT hold a fifth to a third of their parameters), then {@code layerK.weight} /
 * {@code layerK.bias} pairs whose sizes are log-uniform from 1 element up to a bound chosen so that
 * the model has exactly the requested size. Log-uniform because real models mix scalars, biases
 * and norms of a few hundred elements with matrices of millions; a uniform draw would make every
 * tensor large and hide the per-tensor and per-bucket costs that buckets are meant to amortize.
 *
 * <p>Seeded: the same arguments give the same model on every machine and rank.
 *
 * @param parameters in registration (model, forward) order; backward produces them reversed
 *
 * <p>Immutable: safe to share between threads.
 */
public record MixedModel(long seed, DType dtype, List<Parameter> parameters) {
    /** A few hundred tensors, like a transformer of 12 to 24 layers. */
    public static final int DEFAULT_TENSORS = 300;
    /** Share of the elements in the embedding. */
    static final double EMBEDDING_SHARE = 0.25;

    /** One parameter: its gradient has {@code count} elements of {@code dtype}. */
    public record Parameter(String name, long count, DType dtype) {
        public Parameter {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(dtype, "dtype");
            if (count < 1) {
                throw new IllegalArgumentException("parameter '" + name + "': count must be >= 1, got " + count);
            }
        }

        public long byteSize() {
            return count * dtype.bytes();
        }
    }

    public MixedModel {
        Objects.requireNonNull(dtype, "dtype");
        parameters = List.copyOf(parameters);
    }

    /**
     * A model of {@code tensors} parameters of {@code dtype} with {@code totalBytes / dtype.bytes()}
     * elements in all (so its size is {@code totalBytes} rounded down to whole elements).
     *
     * @throws IllegalArgumentException when {@code tensors < 1} or the size holds fewer than two
     *                                  elements per tensor
     */
    public static MixedModel generate(long seed, int tensors, long totalBytes, DType dtype) {
        Objects.requireNonNull(dtype, "dtype");
        if (tensors < 1) {
            throw new IllegalArgumentException("a model needs at least 1 tensor, got " + tensors);
        }
        long total = totalBytes / dtype.bytes();
        if (total < 2L * tensors) {
            throw new IllegalArgumentException(totalBytes + " B hold " + total + " " + dtype.label() + " elements; "
                    + tensors + " tensors need at least " + 2L * tensors);
        }
        SplittableRandom random = new SplittableRandom(seed);
        int others = tensors - 1;
        double[] exponents = new double[others];
        for (int i = 0; i < others; i++) {
            exponents[i] = random.nextDouble();
        }
        long embedding = Math.max(1, (long) (total * EMBEDDING_SHARE));
        long rest = total - embedding;
        // The largest bound whose tensors still fit: the sum grows with the bound, so bisect; the
        // few elements left over go to the embedding, which makes the total exact.
        long low = 1;
        long high = Math.max(1, rest);
        while (low < high) {
            long mid = low + (high - low + 1) / 2;
            if (sum(exponents, mid) <= rest) {
                low = mid;
            } else {
                high = mid - 1;
            }
        }
        long[] counts = new long[others];
        long used = 0;
        for (int i = 0; i < others; i++) {
            counts[i] = count(exponents[i], low);
            used += counts[i];
        }
        embedding += rest - used;

        List<Parameter> params = new ArrayList<>(tensors);
        params.add(new Parameter("embedding.weight", embedding, dtype));
        for (int i = 0; i < others; i += 2) {
            int layer = i / 2;
            if (i + 1 < others) { // the larger of a pair is the weight matrix
                params.add(new Parameter("layer" + layer + ".weight", Math.max(counts[i], counts[i + 1]), dtype));
                params.add(new Parameter("layer" + layer + ".bias", Math.min(counts[i], counts[i + 1]), dtype));
            } else {
                params.add(new Parameter("layer" + layer + ".weight", counts[i], dtype));
            }
        }
        return new MixedModel(seed, dtype, params);
    }

    /** Log-uniform on [1, bound]: exp(x ln bound) for x uniform in [0, 1). */
    private static long count(double exponent, long bound) {
        return Math.max(1, Math.round(Math.exp(exponent * Math.log(bound))));
    }

    private static long sum(double[] exponents, long bound) {
        long s = 0;
        for (double e : exponents) {
            s += count(e, bound);
        }
        return s;
    }

    /** Parameters in the order backward produces them: registration order reversed. */
    public List<Parameter> backwardOrder() {
        return parameters.reversed();
    }

    public int size() {
        return parameters.size();
    }

    public long totalCount() {
        return parameters.stream().mapToLong(Parameter::count).sum();
    }

    public long totalBytes() {
        return parameters.stream().mapToLong(Parameter::byteSize).sum();
    }

    public Parameter largest() {
        return parameters.stream().max(Comparator.comparingLong(Parameter::count)).orElseThrow();
    }

    public Parameter smallest() {
        return parameters.stream().min(Comparator.comparingLong(Parameter::count)).orElseThrow();
    }

    /**
     * Byte offsets of the parameters packed densely in registration order, one more entry for the
     * end: where each one lies in a flat buffer of {@link #totalBytes()} holding them all.
     */
    public long[] denseOffsets() {
        long[] offsets = new long[parameters.size() + 1];
        for (int i = 0; i < parameters.size(); i++) {
            offsets[i + 1] = offsets[i] + parameters.get(i).byteSize();
        }
        return offsets;
    }

    /** Registers every parameter, in registration order. */
    public GradientBuckets.Builder register(GradientBuckets.Builder builder) {
        parameters.forEach(p -> builder.add(p.name(), p.count(), p.dtype()));
        return builder;
    }

    /** The model's gradient buckets on {@code devices}, at most {@code bucketBytes} each. */
    public GradientBuckets buckets(List<? extends Device> devices, long bucketBytes) {
        return register(GradientBuckets.builder(devices).bucketBytes(bucketBytes)).build();
    }

    @Override
    public String toString() {
        return "MixedModel[" + parameters.size() + " tensors of " + dtype.label() + ", " + totalBytes() + " B, seed " + seed
                + ", " + smallest().count() + ".." + largest().count() + " elements]";
    }
}
