package io.gradsync.sync;

import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.device.DeviceStream;
import java.util.ArrayList;
import java.util.List;
import io.gradsync.sync.backend.WrappedAddresses;
import java.util.Objects;

/**
 * One model replica's gradients, all on one device, in registration order, and optionally the
 * stream that produces them.
 *
 * <p>With a {@code stream}, a synchronizer orders its work after what was queued on that stream
 * when the call was made (an event, not a wait for the whole device), and makes the stream wait
 * for the average before anything queued on it later runs: the caller can queue its optimizer step
 * right after the call without waiting on the host. Without one, the synchronizer waits for all
 * work queued on the device first ({@link SyncOptions#waitForCaller()}).
 *
 * <p>Immutable, so safe to share between threads.
 *
 * @param stream the caller's stream of {@code device} on which the gradients are produced (a
 *               gradsync stream, or a wrapped one of another library: {@code CudaDevice.wrapStream}); may be null
 */
public record Replica(Device device, List<Gradient> gradients, DeviceStream stream) {

    public Replica {
        Objects.requireNonNull(device, "replica device");
        gradients = List.copyOf(Objects.requireNonNull(gradients, "replica gradients"));
        if (stream != null && stream.device() != device) {
            throw new IllegalArgumentException("replica on " + device.id() + ": its stream is a stream of "
                    + stream.device().id() + ", not of the replica's device");
        }
    }

    /** A replica without a stream of its own: the synchronizer waits for the whole device. */
    public Replica(Device device, List<Gradient> gradients) {
        this(device, gradients, null);
    }

    public static Builder on(Device device) {
        return new Builder(device);
    }

    /** This replica with its gradients produced on {@code stream}. */
    public Replica withStream(DeviceStream stream) {
        return new Replica(device, gradients, stream);
    }

    /** Collects gradients for one device. Not for use by several threads at once. */
    public static final class Builder {
        private final Device device;
        private final List<Gradient> gradients = new ArrayList<>();
        private DeviceStream stream;

        private Builder(Device device) {
            this.device = device;
        }

        public Builder add(Gradient gradient) {
            gradients.add(gradient);
            return this;
        }

        /** The whole {@code buffer} as one gradient named {@code name}. */
        public Builder add(String name, DeviceBuffer buffer, DType dtype) {
            return add(Gradient.of(name, buffer, dtype));
        }

        /**
         * A gradient in memory another library allocated, wrapped in place by the device's
         * {@link Device#wrap(long, long)}: {@code count} elements of {@code dtype} at
         * {@code address}, a device pointer on a {@code CudaDevice} (checked through the driver),
         * a host address on a {@code JvmDevice} (checked against the process's memory map). One call per tensor of a framework's model; gradsync never
         * frees the memory.
         *
         * @throws IllegalArgumentException naming the gradient where the memory fails those checks
         * @throws UnsupportedOperationException on a device that takes no foreign memory (OpenCL)
         */
        public Builder wrap(String name, long address, long count, DType dtype) {
            return wrap(ForeignTensor.fixed(name, address, count, dtype));
        }

        /**
         * Every tensor of {@code tensors}, wrapped in order as {@link #wrap(String, long, long, DType)}
         * wraps one: a framework's model, hundreds of tensors, in one call. A tensor whose
         * {@link ForeignTensor#address()} later differs from the address wrapped fails the calls that
         * use it, naming it, before anything moves.
         *
         * @throws IllegalArgumentException naming the first tensor whose memory fails the checks (the
         *                                  tensors before it stay added)
         */
        public Builder wrap(List<ForeignTensor> tensors) {
            for (ForeignTensor t : tensors) {
                wrap(t);
            }
            return this;
        }

        /** One framework tensor, as {@link #wrap(List)} wraps each. */
        public Builder wrap(ForeignTensor tensor) {
            String name = tensor.name();
            long count = tensor.count();
            DType dtype = tensor.dtype();
            long address = tensor.address().getAsLong();
            Objects.requireNonNull(dtype, "dtype of gradient '" + name + "'");
            if (count <= 0) {
                throw new IllegalArgumentException("gradient '" + name + "': count must be positive to wrap memory, got " + count);
            }
            long bytes;
            try {
                bytes = Math.multiplyExact(count, (long) dtype.bytes());
            } catch (ArithmeticException e) {
                throw new IllegalArgumentException("gradient '" + name + "': count " + count + " overflows");
            }
            DeviceBuffer buffer;
            try {
                buffer = device.wrap(address, bytes);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("gradient '" + name + "': " + e.getMessage(), e);
            } catch (UnsupportedOperationException e) {
                throw new UnsupportedOperationException("gradient '" + name + "': " + e.getMessage(), e);
            }
            if (!(tensor.address() instanceof ForeignTensor.Fixed)) {
                WrappedAddresses.register(buffer, tensor.address());
            }
            return add(Gradient.of(name, buffer, dtype));
        }

        /** The stream the gradients are produced on ({@link Replica#stream()}). */
        public Builder stream(DeviceStream stream) {
            this.stream = stream;
            return this;
        }

        public Replica build() {
            return new Replica(device, gradients, stream);
        }
    }
}
