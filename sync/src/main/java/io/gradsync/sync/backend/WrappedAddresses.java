package io.gradsync.sync.backend;

import io.gradsync.sync.Gradient;
import io.gradsync.tasks.device.DeviceBuffer;
import java.util.Collections;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.function.LongSupplier;

/**
 * Where the tensors wrapped from a framework are now: per wrapping buffer, the tensor's address as
 * its framework says it is ({@code ForeignTensor.address()}). {@link ReplicaCheck} asks before every
 * call, so that a tensor the framework moved fails the call naming it rather than leaving the live
 * one un-averaged and the freed one written.
 *
 * <p>Thread-safety: a synchronized weak map keyed by buffer identity; buffers no one uses any more
 * drop out by themselves.
 */
public final class WrappedAddresses {
    private static final Map<DeviceBuffer, LongSupplier> WHERE = Collections.synchronizedMap(new WeakHashMap<>());
    /** Set once anything registers: until then every call's check costs one read, not a locked lookup per gradient. */
    private static volatile boolean used;

    private WrappedAddresses() {
    }

    /** Whether any buffer wraps a framework's tensor: until then {@link #moved} is null for every gradient. */
    static boolean used() {
        return used;
    }

    /** {@code buffer} wraps the tensor whose data lies where {@code address} says. */
    public static void register(DeviceBuffer buffer, LongSupplier address) {
        WHERE.put(buffer, address);
        used = true;
    }

    /**
     * Null where {@code g} wraps its tensor's current memory (or is no wrapped tensor); else why not,
     * as a clause naming both addresses.
     */
    static String moved(Gradient g) {
        if (!used) {
            return null;
        }
        LongSupplier where = WHERE.get(g.buffer());
        if (where == null) {
            return null;
        }
        long now;
        try {
            now = where.getAsLong();
        } catch (RuntimeException e) {
            return "its tensor's address could not be read (" + e + ")";
        }
        long wrapped = g.buffer().address();
        if (now == wrapped) {
            return null;
        }
        return "its tensor moved: wrapped at 0x" + Long.toHexString(wrapped) + ", its data is now at 0x" + Long.toHexString(now)
                + " (the framework freed it and allocated another, as libtorch's zero_grad() and the next backward do); keep its "
                + "memory in place (zero_grad(false)), let it live in gradsync's buckets, or wrap it again";
    }
}
