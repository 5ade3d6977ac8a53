package io.gradsync.sync;

import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * A framework's gradient tensor, to be wrapped in place as a {@link Gradient}
 * ({@link Replica.Builder#wrap(java.util.List)}): its name, where its data lies, its element count
 * and type. The address is asked for when the tensor is wrapped and again before every call that
 * uses it: where it has changed (the framework freed the tensor and allocated another, as libtorch's
 * default {@code zero_grad()} and the next backward do), the call fails naming the tensor before
 * anything moves, instead of averaging memory that is stale or freed.
 *
 * @param address the tensor's data address now (a device pointer on CUDA, a host address on JVM
 *                devices); asked once per call, so it should be cheap (libtorch:
 *                {@code () -> grad.data_ptr().address()})
 *
 * <p>Immutable; the supplier is called from the thread that makes the call.
 */
public record ForeignTensor(String name, LongSupplier address, long count, DType dtype) {

    public ForeignTensor {
        Objects.requireNonNull(name, "tensor name");
        Objects.requireNonNull(address, "address of tensor '" + name + "'");
        Objects.requireNonNull(dtype, "dtype of tensor '" + name + "'");
    }

    /** A tensor whose memory stays where it is for as long as it is used: its address is not asked again. */
    public static ForeignTensor fixed(String name, long address, long count, DType dtype) {
        return new ForeignTensor(name, new Fixed(address), count, dtype);
    }

    /** A fixed address: the per-call check has nothing to ask. */
    record Fixed(long value) implements LongSupplier {
        @Override
        public long getAsLong() {
            return value;
        }
    }
}
