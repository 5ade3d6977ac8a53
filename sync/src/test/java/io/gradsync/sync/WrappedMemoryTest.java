package io.gradsync.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gradsync.sync.verify.AverageCheck;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.jvm.JvmDevice;
import io.gradsync.tasks.jvm.JvmRuntime;
import io.gradsync.tasks.opencl.OpenClRuntime;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * A framework's tensors as gradients: each replica's tensors given as raw host addresses
 * ({@code Replica.Builder.wrap}), averaged in place, exactly; bad memory refused naming the tensor.
 */
class WrappedMemoryTest {
    private static final long[] COUNTS = {300, 17, 4096};

    @Test
    void tensorsGivenByAddressAreAveragedInPlace() {
        assumeTrue(Files.isReadable(Path.of("/proc/self/maps")), "no process memory map to check addresses against");
        List<JvmDevice> devices = JvmRuntime.createDevices(2);
        try (Arena arena = Arena.ofShared()) {
            SplittableRandom rnd = new SplittableRandom(7);
            List<List<MemorySegment>> tensors = new ArrayList<>();
            List<Replica> replicas = new ArrayList<>();
            for (JvmDevice d : devices) {
                Replica.Builder b = Replica.on(d);
                List<MemorySegment> mine = new ArrayList<>();
                for (int t = 0; t < COUNTS.length; t++) {
                    MemorySegment m = arena.allocate(COUNTS[t] * 4, 4); // as a framework allocates its tensors
                    for (long i = 0; i < COUNTS[t]; i++) {
                        m.setAtIndex(ValueLayout.JAVA_FLOAT, i, (float) rnd.nextGaussian());
                    }
                    mine.add(m);
                    b.wrap("tensor" + t, m.address(), COUNTS[t], DType.FP32);
                }
                tensors.add(mine);
                replicas.add(b.build());
            }
            List<MemorySegment> inputs0 = tensors.get(0).stream().map(m -> arena.allocate(m.byteSize()).copyFrom(m)).toList();
            List<MemorySegment> inputs1 = tensors.get(1).stream().map(m -> arena.allocate(m.byteSize()).copyFrom(m)).toList();
            try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, devices, SyncOptions.defaults())) {
                sync.synchronize(replicas);
            }
            for (int t = 0; t < COUNTS.length; t++) {
                MemorySegment[] in = {inputs0.get(t), inputs1.get(t)};
                for (int r = 0; r < 2; r++) {
                    assertEquals(0, AverageCheck.countWrong(DType.FP32, in, tensors.get(r).get(t), COUNTS[t]), "tensor" + t + " of replica " + r);
                }
            }
        } finally {
            devices.forEach(Device::close);
        }
    }

    /**
     * A framework that moves a tensor after it was wrapped (libtorch's default zero_grad() frees the
     * grads, the next backward allocates new ones): every collective then fails naming the tensor
     * and both addresses before anything moves; once the tensor is back where it was wrapped, the
     * calls work again. Many tensors go in one {@code wrap(List)}.
     */
    @Test
    void aTensorThatMovedFailsTheCallNamingItAndNothingMoves() {
        assumeTrue(Files.isReadable(Path.of("/proc/self/maps")), "no process memory map to check addresses against");
        List<JvmDevice> devices = JvmRuntime.createDevices(2);
        try (Arena arena = Arena.ofShared();
             GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, devices, SyncOptions.defaults())) {
            java.util.concurrent.atomic.AtomicLong whereFc1 = new java.util.concurrent.atomic.AtomicLong();
            List<Replica> replicas = new ArrayList<>();
            List<MemorySegment> fc1 = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                MemorySegment w = arena.allocate(4 * 1000, 4).fill((byte) (r + 1));
                MemorySegment b = arena.allocate(4 * 10, 4).fill((byte) (r + 1));
                fc1.add(w);
                if (r == 1) {
                    whereFc1.set(w.address());
                }
                List<ForeignTensor> model = List.of(
                        new ForeignTensor("fc1.weight", r == 1 ? whereFc1::get : w::address, 1000, DType.FP32),
                        ForeignTensor.fixed("fc1.bias", b.address(), 10, DType.FP32));
                replicas.add(Replica.on(devices.get(r)).wrap(model).build());
            }
            assertEquals(List.of("fc1.weight", "fc1.bias"), replicas.get(1).gradients().stream().map(Gradient::name).toList());
            MemorySegment moved = arena.allocate(4 * 1000, 4);
            whereFc1.set(moved.address()); // replica 1's framework reallocated its fc1.weight grad
            byte[] before0 = fc1.get(0).toArray(ValueLayout.JAVA_BYTE);
            for (Runnable call : List.<Runnable>of(() -> sync.synchronize(replicas), () -> sync.synchronizeAsync(replicas).await(),
                    () -> sync.reduceScatter(replicas), () -> sync.broadcast(replicas, 0))) {
                IllegalStateException e = assertThrows(IllegalStateException.class, call::run);
                assertTrue(e.getMessage().startsWith("replica 1 (jvm:1): gradient 'fc1.weight': its tensor moved: wrapped at 0x"
                        + Long.toHexString(fc1.get(1).address()) + ", its data is now at 0x" + Long.toHexString(moved.address())), e.getMessage());
                assertTrue(e.getMessage().contains("zero_grad(false)"), e.getMessage());
            }
            assertTrue(java.util.Arrays.equals(before0, fc1.get(0).toArray(ValueLayout.JAVA_BYTE)), "nothing moved");
            whereFc1.set(fc1.get(1).address()); // back in place
            sync.synchronize(replicas);
            float one = Float.intBitsToFloat(0x01010101), two = Float.intBitsToFloat(0x02020202);
            assertEquals((float) (((double) one + two) / 2), fc1.get(0).getAtIndex(ValueLayout.JAVA_FLOAT, 0), "the average of the two fills");
        } finally {
            devices.forEach(Device::close);
        }
    }

    @Test
    void badMemoryIsRefusedNamingTheTensor() {
        assumeTrue(Files.isReadable(Path.of("/proc/self/maps")), "no process memory map to check addresses against");
        try (JvmDevice d = JvmRuntime.createDevices(1).getFirst()) {
            Replica.Builder b = Replica.on(d);
            IllegalArgumentException unmapped = assertThrows(IllegalArgumentException.class, () -> b.wrap("fc1.weight", 0x10, 64, DType.FP32));
            assertTrue(unmapped.getMessage().startsWith("gradient 'fc1.weight': native memory at 0x10") && unmapped.getMessage().contains("not mapped"),
                    unmapped.getMessage());
            IllegalArgumentException none = assertThrows(IllegalArgumentException.class, () -> b.wrap("fc1.bias", 0x1000, 0, DType.FP32));
            assertTrue(none.getMessage().contains("gradient 'fc1.bias': count must be positive"), none.getMessage());
            assertEquals(0, b.build().gradients().size(), "nothing was added");
        }
    }

    @Test
    void openClDevicesTakeNoForeignMemory() {
        assumeTrue(OpenClRuntime.status().available(), () -> "OpenCL unavailable: " + OpenClRuntime.status().detail());
        List<? extends Device> cl = OpenClRuntime.logicalDevices(1);
        try {
            UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class,
                    () -> Replica.on(cl.getFirst()).wrap("w", 0x1000, 4, DType.FP32));
            assertTrue(e.getMessage().contains("takes no memory another library allocated"), e.getMessage());
        } finally {
            cl.forEach(Device::close);
        }
    }
}
