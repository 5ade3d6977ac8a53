package io.gradsync.sync;

import io.gradsync.sync.backend.ptx.PtxOnJvm;
import io.gradsync.sync.internal.HostAverage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.device.HostBuffer;
import io.gradsync.tasks.jvm.JvmRuntime;
import io.gradsync.tasks.opencl.OpenClRuntime;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What the average is, on every backend that computes it itself: the float64 sum in replica
 * order, divided by n, rounded once to the dtype: bit for bit the host reference
 * ({@link HostAverage}, itself checked against an independent rounding in {@link HostAverageTest}),
 * huge values included (four replicas of 3e38 average to 3e38, not infinity).
 */
class AverageDefinitionTest {
    private final List<Device> opened = new ArrayList<>();

    @AfterEach
    void close() {
        opened.forEach(Device::close);
    }

    static Stream<Arguments> cases() {
        List<Arguments> out = new ArrayList<>();
        for (String backend : List.of("cpu", "ptx schedule", "opencl")) {
            for (DType t : DType.values()) {
                for (int n : new int[] {2, 3, 4, 8}) {
                    out.add(Arguments.of(backend, t, n));
                }
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0}, {1}, {2} replicas")
    @MethodSource("cases")
    void everyBackendGivesTheDefinedBits(String backend, DType dtype, int n) {
        check(backend, dtype, n, false);
    }

    /** The same on GPUs: ptx's PTX kernels, cpu through pinned memory, opencl on NVIDIA's OpenCL (replicas share GPUs). */
    @ParameterizedTest(name = "{0}, {1}, {2} replicas on GPUs")
    @MethodSource("gpuCases")
    @org.junit.jupiter.api.Tag("gpu")
    void everyBackendGivesTheDefinedBitsOnGpus(String backend, DType dtype, int n) {
        assumeTrue(io.gradsync.tasks.cuda.CudaRuntime.status().available(), () -> io.gradsync.tasks.cuda.CudaRuntime.status().describe());
        check(backend, dtype, n, true);
    }

    static Stream<Arguments> gpuCases() {
        return cases().map(a -> a.get()[0].equals("ptx schedule") ? Arguments.of("ptx", a.get()[1], a.get()[2]) : a);
    }

    private void check(String backend, DType dtype, int n, boolean gpus) {
        List<? extends Device> devices;
        if (gpus && !backend.equals("opencl")) {
            devices = io.gradsync.tasks.cuda.CudaRuntime.logicalDevices(n, 1);
        } else if (backend.equals("opencl")) {
            assumeTrue(OpenClRuntime.status().available(), () -> "OpenCL unavailable: " + OpenClRuntime.status().detail());
            devices = OpenClRuntime.logicalDevices(n);
        } else {
            devices = JvmRuntime.createDevices(n);
        }
        if (!gpus || backend.equals("opencl")) {
            opened.addAll(devices);
        }
        try (GradientSynchronizer sync = backend.equals("ptx schedule")
                ? PtxOnJvm.schedule(devices, PtxOptions.defaults().withOneShotMaxBytes(4096), false, true)
                : Synchronizers.create(SyncBackend.parse(backend), devices);
                ReplicaFixture f = ReplicaFixture.flat(devices, 20_011, dtype, 31L * n + dtype.ordinal());
                Arena arena = Arena.ofConfined()) {
            int count = 20_011;
            long at = f.offsets[0];
            MemorySegment[] inputs = new MemorySegment[n];
            for (int r = 0; r < n; r++) {
                inputs[r] = f.inputs.get(r).segment().asSlice(at, (long) count * dtype.bytes());
            }
            // some elements huge: the mean of values near the top of the range must stay finite
            float huge = dtype == DType.FP16 ? 60000f : 3e38f;
            for (int i = 0; i < count; i += 97) {
                for (int r = 0; r < n; r++) {
                    put(dtype, inputs[r], i, huge);
                }
            }
            for (int r = 0; r < n; r++) { // the fixture keeps its inputs in host memory: put the edited ones on the devices
                upload(devices.get(r), f, r);
            }
            MemorySegment want = arena.allocate((long) count * dtype.bytes(), 64);
            HostAverage.average(dtype, inputs, want, 0, count);
            sync.synchronize(f.replicas);
            for (int r = 0; r < n; r++) {
                MemorySegment got = f.download(r).asSlice(at, (long) count * dtype.bytes());
                long mismatch = got.mismatch(want);
                assertEquals(-1, mismatch, () -> backend + " replica: first differing byte " + mismatch);
            }
        }
    }

    private static void upload(Device d, ReplicaFixture f, int r) {
        HostBuffer host = f.inputs.get(r);
        try (DeviceStream s = d.createStream()) {
            s.copyFromHost(host, 0, f.buffers.get(r), 0, f.bufferBytes);
            s.synchronize();
        }
    }

    private static void put(DType dtype, MemorySegment s, long i, float v) {
        switch (dtype) {
            case FP32 -> s.setAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i, v);
            case BF16 -> s.setAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i, io.gradsync.tasks.api.HalfFloats.floatToBf16(v));
            case FP16 -> s.setAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i, io.gradsync.tasks.api.HalfFloats.floatToHalf(v));
        }
    }
}
