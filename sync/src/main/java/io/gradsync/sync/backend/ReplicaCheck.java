package io.gradsync.sync.backend;

import io.gradsync.sync.Gradient;
import io.gradsync.sync.Replica;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.device.DeviceRuntime;
import io.gradsync.tasks.jvm.JvmBuffer;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Checks a replica set against the synchronizer's devices before anything moves; every message
 * names the replica, its device, the gradient and the mismatch.
 */
public final class ReplicaCheck {
    private ReplicaCheck() {
    }

    public static void check(List<Replica> replicas, List<? extends Device> devices) {
        if (replicas == null || replicas.isEmpty()) {
            throw new IllegalArgumentException("replicas: the replica set is empty; expected one replica per device ("
                    + ids(devices) + ")");
        }
        if (replicas.size() != devices.size()) {
            throw new IllegalArgumentException("replicas: expected " + devices.size() + " (one per device: "
                    + ids(devices) + "), got " + replicas.size());
        }
        Replica first = replicas.getFirst();
        for (int r = 0; r < replicas.size(); r++) {
            Replica replica = replicas.get(r);
            if (replica == null) {
                throw new IllegalArgumentException("replicas: replica " + r + " is null");
            }
            Device expected = devices.get(r);
            if (replica.device() != expected) {
                throw new IllegalArgumentException("replica " + r + ": is on " + replica.device().id()
                        + (replica.device().id().equals(expected.id())
                                ? ", a different device object than this synchronizer's " + expected.id()
                                        + " (devices of another createDevices / logicalDevices call?): use the synchronizer's own devices"
                                : " but this synchronizer's device " + r + " is " + expected.id()));
            }
            List<Gradient> grads = replica.gradients();
            Set<String> names = new HashSet<>();
            for (Gradient g : grads) {
                if (!names.add(g.name())) {
                    throw new IllegalArgumentException("replica " + r + " (" + expected.id() + "): gradient '"
                            + g.name() + "' appears twice");
                }
                if (g.buffer().device() != expected) {
                    throw new IllegalArgumentException("replica " + r + " (" + expected.id() + "): gradient '"
                            + g.name() + "' is in a buffer on " + g.buffer().device().id() + ", not on the replica's device");
                }
                checkLive(r, expected, g);
            }
            checkStream(r, expected, replica);
        }
        checkNoOverlap(replicas);
        for (int r = 1; r < replicas.size(); r++) {
            Device expected = devices.get(r);
            List<Gradient> grads = replicas.get(r).gradients();
            if (grads.size() != first.gradients().size()) {
                throw new IllegalArgumentException("replica " + r + " (" + expected.id() + "): has " + grads.size()
                        + " gradients, replica 0 has " + first.gradients().size());
            }
            for (int i = 0; i < grads.size(); i++) {
                Gradient g = grads.get(i);
                Gradient f = first.gradients().get(i);
                if (!g.name().equals(f.name())) {
                    throw new IllegalArgumentException("replica " + r + " (" + expected.id() + "): gradient " + i
                            + " is named '" + g.name() + "', replica 0's is '" + f.name() + "'");
                }
                if (g.count() != f.count()) {
                    throw new IllegalArgumentException("replica " + r + " (" + expected.id() + "): gradient '"
                            + g.name() + "' has " + g.count() + " elements, replica 0's has " + f.count());
                }
                if (g.dtype() != f.dtype()) {
                    throw new IllegalArgumentException("replica " + r + " (" + expected.id() + "): gradient '"
                            + g.name() + "' is " + g.dtype().label() + ", replica 0's is " + f.dtype().label());
                }
            }
        }
    }

    /** What can change between two calls with the same replica objects: closed memory, moved tensors, closed streams. */
    private static void checkLive(int r, Device expected, Gradient g) {
        if (g.buffer().isClosed()) {
            throw new IllegalArgumentException("replica " + r + " (" + expected.id() + "): gradient '"
                    + g.name() + "' is in a closed buffer");
        }
        if (g.buffer() instanceof JvmBuffer jvm && !jvm.segment().scope().isAlive()) {
            throw new IllegalStateException("replica " + r + " (" + expected.id() + "): gradient '" + g.name()
                    + "' wraps a segment whose arena is closed (the memory is gone)");
        }
        String moved = WrappedAddresses.moved(g);
        if (moved != null) {
            throw new IllegalStateException("replica " + r + " (" + expected.id() + "): gradient '" + g.name() + "': " + moved);
        }
    }

    private static void checkStream(int r, Device expected, Replica replica) {
        if (replica.stream() != null && replica.stream().isClosed()) {
            throw new IllegalArgumentException("replica " + r + " (" + expected.id() + "): its stream is closed");
        }
    }

    /**
     * {@link #check} for one synchronizer, which a training loop calls with the same replica
     * objects every step: the replicas are records of immutable lists, so what made them
     * acceptable (devices, names, counts, types, no overlap) holds for as long as they are the same
     * objects, and only what can change is checked again ({@code checkLive}). A set not seen last
     * gets the whole check. Thread-safety: any thread.
     */
    public static final class Memo {
        /**
         * The replicas last found acceptable, the devices they were checked against, and what can
         * change about them, flat: every gradient's buffer, and the segments of those that wrap a
         * caller's memory (a buffer gradsync allocated is freed only by its own close).
         */
        private record Checked(Replica[] replicas, List<? extends Device> devices, DeviceBuffer[] buffers,
                MemorySegment[] wrapped) {
            static Checked of(List<Replica> replicas, List<? extends Device> devices) {
                List<DeviceBuffer> buffers = new ArrayList<>();
                List<MemorySegment> wrapped = new ArrayList<>();
                for (Replica r : replicas) {
                    for (Gradient g : r.gradients()) {
                        buffers.add(g.buffer());
                        if (g.buffer() instanceof JvmBuffer jvm && !jvm.isOwned()) {
                            wrapped.add(jvm.segment());
                        }
                    }
                }
                return new Checked(replicas.toArray(Replica[]::new), devices, buffers.toArray(DeviceBuffer[]::new),
                        wrapped.toArray(MemorySegment[]::new));
            }

            /** Whether nothing that can change has: else the whole live check names what did. */
            boolean stillLive() {
                for (DeviceBuffer b : buffers) {
                    if (b.isClosed()) {
                        return false;
                    }
                }
                for (MemorySegment m : wrapped) {
                    if (!m.scope().isAlive()) {
                        return false;
                    }
                }
                for (Replica r : replicas) {
                    if (r.stream() != null && r.stream().isClosed()) {
                        return false;
                    }
                }
                return !WrappedAddresses.used();
            }
        }

        private volatile Checked last;

        public void check(List<Replica> replicas, List<? extends Device> devices) {
            Checked c = last;
            if (c != null && c.devices() == devices && sameObjects(c.replicas(), replicas)) {
                if (c.stillLive()) {
                    return;
                }
                for (int r = 0; r < c.replicas().length; r++) {
                    Replica replica = c.replicas()[r];
                    for (Gradient g : replica.gradients()) {
                        checkLive(r, devices.get(r), g);
                    }
                    checkStream(r, devices.get(r), replica);
                }
                return;
            }
            ReplicaCheck.check(replicas, devices);
            last = Checked.of(replicas, devices);
        }

    }

    /**
     * Whether {@code replicas} are the very objects of {@code seen}, in order: what a backend may
     * keep about a replica set it was called with (they are records of immutable lists) still holds.
     */
    public static boolean sameObjects(Replica[] seen, List<Replica> replicas) {
        if (replicas == null || replicas.size() != seen.length) {
            return false;
        }
        for (int r = 0; r < seen.length; r++) {
            if (replicas.get(r) != seen[r]) {
                return false;
            }
        }
        return true;
    }

    /**
     * Two gradients that share bytes, in one replica or in two, would be averaged twice, or one
     * would read the other's half-written result. Buffers with an address are compared by address
     * (two wrappers can alias one allocation, and logical devices share a GPU's address space);
     * others (OpenCL) by buffer.
     */
    private static void checkNoOverlap(List<Replica> replicas) {
        Map<Object, List<Span>> bySpace = new IdentityHashMap<>();
        for (int r = 0; r < replicas.size(); r++) {
            for (Gradient g : replicas.get(r).gradients()) {
                if (g.count() == 0) {
                    continue;
                }
                Device device = g.buffer().device();
                boolean addressed = device.runtime() != DeviceRuntime.OPENCL;
                long start = addressed ? g.address() : g.byteOffset();
                bySpace.computeIfAbsent(addressed ? device.runtime() : g.buffer(), k -> new ArrayList<>())
                        .add(new Span(start, start + g.byteSize(), r, g));
            }
        }
        for (List<Span> spans : bySpace.values()) {
            spans.sort(Comparator.comparingLong(Span::start));
            Span reach = spans.getFirst(); // of the spans so far, the one that ends last
            for (int i = 1; i < spans.size(); i++) {
                Span b = spans.get(i);
                if (b.start() < reach.end()) {
                    throw overlap(reach, b);
                }
                if (b.end() > reach.end()) {
                    reach = b;
                }
            }
        }
    }

    private record Span(long start, long end, int replica, Gradient g) {
        String of() {
            return "replica " + replica + " (" + g.buffer().device().id() + ")";
        }
    }

    private static IllegalArgumentException overlap(Span a, Span b) {
        long common = Math.min(a.end(), b.end()) - b.start();
        if (a.replica() == b.replica()) {
            return new IllegalArgumentException(a.of() + ": gradients '" + a.g().name() + "' and '" + b.g().name() + "' overlap ("
                    + common + " bytes in common); each byte may belong to one gradient only");
        }
        return new IllegalArgumentException("gradient '" + a.g().name() + "' of " + a.of() + " and gradient '" + b.g().name()
                + "' of " + b.of() + " overlap (" + common + " bytes in common); replicas must not share memory");
    }

    private static String ids(List<? extends Device> devices) {
        return String.join(", ", devices.stream().map(Device::id).toList());
    }
}
