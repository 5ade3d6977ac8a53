package io.gradsync.tasks.device.internal;

import io.gradsync.tasks.device.RuntimeStatus;
import java.util.List;
import java.util.function.Supplier;

/**
 * A native runtime's devices, looked for once, on first use, by whichever thread asks first.
 * Looking never throws: a missing library or an empty machine becomes the reason in
 * {@link #status()}, and only asking for a device that is not there throws.
 *
 * <p>Thread-safety: every method may be called from any thread at once; the look runs once, on the
 * first caller's thread, and concurrent first callers wait for its result.
 *
 * @param <D> the runtime's device type
 */
public final class Discovery<D> {

    /** What one look at the machine found: the status, and the devices in order (none when unavailable). */
    public record Found<D>(RuntimeStatus status, List<D> devices) {
        public Found {
            devices = List.copyOf(devices);
        }

        public static <D> Found<D> none(RuntimeStatus status) {
            return new Found<>(status, List.of());
        }
    }

    private final String name;
    private final Supplier<Found<D>> look;
    private volatile Found<D> found;

    /** @param name the runtime as messages name it ("CUDA", "OpenCL") */
    public Discovery(String name, Supplier<Found<D>> look) {
        this.name = name;
        this.look = look;
    }

    private Found<D> found() {
        Found<D> f = found;
        if (f == null) {
            synchronized (this) {
                if (found == null) {
                    found = look.get();
                }
                f = found;
            }
        }
        return f;
    }

    public RuntimeStatus status() {
        return found().status();
    }

    /** Every device found, in order; empty when the runtime is unavailable. */
    public List<D> devices() {
        return found().devices();
    }

    /** The devices, or an exception saying why the runtime cannot be used. */
    public List<D> requireDevices() {
        Found<D> f = found();
        if (!f.status().available()) {
            throw new IllegalStateException(name + " is unavailable: " + f.status().detail());
        }
        return f.devices();
    }

    /** The device with this ordinal, or an exception saying what exists. */
    public D device(int ordinal) {
        List<D> all = requireDevices();
        if (ordinal < 0 || ordinal >= all.size()) {
            throw new IllegalArgumentException("no " + name + " device " + ordinal + "; this machine has " + all.size());
        }
        return all.get(ordinal);
    }
}
