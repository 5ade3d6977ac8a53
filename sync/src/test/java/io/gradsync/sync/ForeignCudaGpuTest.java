package io.gradsync.sync;

import static jcuda.driver.JCudaDriver.cuCtxSetCurrent;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRetain;
import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuMemAlloc;
import static jcuda.driver.JCudaDriver.cuMemAllocAsync;
import static jcuda.driver.JCudaDriver.cuMemFree;
import static jcuda.driver.JCudaDriver.cuMemFreeAsync;
import static jcuda.driver.JCudaDriver.cuMemFreeHost;
import static jcuda.driver.JCudaDriver.cuMemHostAlloc;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoDAsync;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;
import static jcuda.driver.JCudaDriver.cuMemsetD32Async;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gradsync.nccl.Nccl;
import io.gradsync.tasks.cuda.CudaBuffer;
import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.cuda.CudaRuntime;
import io.gradsync.tasks.cuda.CudaStream;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import jcuda.Pointer;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUstream;
import jcuda.driver.JCudaDriver;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Memory and streams that another library made (here: JCuda's driver calls, in the primary
 * context, as the CUDA runtime, PyTorch and cuBLAS make them), averaged in place by every backend,
 * and the driver-checked rejection of pointers and streams that do not fit.
 */
@Tag("gpu")
class ForeignCudaGpuTest {
    private static final int N = 1 << 20;

    /** The user's side: cuMemAlloc in the primary context of the GPU, values i + r, poison around. */
    private static CUdeviceptr userAlloc(CudaDevice d, long bytes) {
        bindPrimary(d);
        CUdeviceptr p = new CUdeviceptr();
        check(cuMemAlloc(p, bytes));
        return p;
    }

    private static void bindPrimary(CudaDevice d) {
        CUdevice dev = new CUdevice();
        check(cuDeviceGet(dev, d.ordinal()));
        CUcontext ctx = new CUcontext();
        check(cuDevicePrimaryCtxRetain(ctx, dev));
        check(cuCtxSetCurrent(ctx));
    }

    /** The address as a JCuda user gets it through public API: the pointer's own attribute. */
    private static long address(CUdeviceptr p) {
        long[] value = {0};
        check(JCudaDriver.cuPointerGetAttribute(Pointer.to(value),
                jcuda.driver.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_POINTER, p));
        return value[0];
    }

    private static void check(int rc) {
        assertEquals(0, rc, () -> "driver call failed: " + jcuda.driver.CUresult.stringFor(rc));
    }

    private static float[] fill(int r) {
        float[] v = new float[N];
        for (int i = 0; i < N; i++) {
            v[i] = (i % 1000) * 0.5f + r;
        }
        return v;
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"cpu", "ptx", "single", "nccl"})
    void foreignAllocationsAreAveragedInPlace(String backend) {
        boolean one = backend.equals("single") || backend.equals("nccl");
        if (backend.equals("nccl")) {
            assumeTrue(Nccl.availability().isAvailable(), () -> "NCCL: " + Nccl.availability().reason());
        }
        List<CudaDevice> devices = one ? List.of(GpuSet.own(1).cuda().getFirst()) : CudaRuntime.logicalDevices(2, 1);
        List<CUdeviceptr> mine = new ArrayList<>();
        List<Replica> replicas = new ArrayList<>();
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.parse(backend), devices)) {
            for (int r = 0; r < devices.size(); r++) {
                CUdeviceptr p = userAlloc(devices.get(r), (long) N * 4 + 4096);
                mine.add(p);
                check(cuMemcpyHtoD(p.withByteOffset(4096), Pointer.to(fill(r)), (long) N * 4));
                CudaDevice d = devices.get(r);
                Replica rep = r % 2 == 0
                        ? Replica.on(d).add("w", d.wrap(address(p) + 4096, (long) N * 4), DType.FP32).build()
                        : Replica.on(d).wrap("w", address(p) + 4096, N, DType.FP32).build(); // the builder's own wrap
                assertFalse(rep.gradients().getFirst().buffer().isOwned());
                replicas.add(rep);
            }
            sync.synchronize(replicas);
            for (int r = 0; r < devices.size(); r++) {
                float[] got = new float[N];
                check(cuMemcpyDtoH(Pointer.to(got), mine.get(r).withByteOffset(4096), (long) N * 4));
                for (int i = 0; i < N; i += 101) {
                    float want = (i % 1000) * 0.5f + (devices.size() - 1) / 2f;
                    assertEquals(want, got[i], "replica " + r + " element " + i);
                }
            }
        } finally {
            replicas.forEach(rep -> rep.gradients().getFirst().buffer().close()); // lets go, frees nothing
            for (CUdeviceptr p : mine) {
                check(cuMemFree(p)); // still ours to free: gradsync did not
            }
        }
    }

    @Test
    void poolMemoryIsAveragedWhereNoPeerReadsIt() {
        List<CudaDevice> devices = CudaRuntime.logicalDevices(2, 1);
        bindPrimary(devices.getFirst());
        CUstream s = new CUstream();
        check(cuStreamCreate(s, 0));
        List<CUdeviceptr> mine = new ArrayList<>();
        List<Replica> replicas = new ArrayList<>();
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.PTX, devices)) {
            for (int r = 0; r < 2; r++) {
                CUdeviceptr p = new CUdeviceptr();
                check(cuMemAllocAsync(p, (long) N * 4, s));
                check(cuStreamSynchronize(s));
                mine.add(p);
                check(cuMemcpyHtoD(p, Pointer.to(fill(r)), (long) N * 4));
                CudaBuffer b = devices.get(r).wrap(address(p), (long) N * 4);
                assertTrue(b.isFromPool());
                replicas.add(Replica.on(devices.get(r)).add("w", b, DType.FP32).build());
            }
            sync.synchronize(replicas);
            float[] got = new float[N];
            check(cuMemcpyDtoH(Pointer.to(got), mine.get(1), (long) N * 4));
            assertEquals(0.5f, got[0]);
            assertEquals(999 * 0.5f + 0.5f, got[999]);
        } finally {
            for (CUdeviceptr p : mine) {
                check(cuMemFreeAsync(p, s));
            }
            check(cuStreamSynchronize(s));
            check(cuStreamDestroy(s));
        }
    }

    /** Two distinct GPUs: ptx would read the pool memory from the peer, so it refuses before anything moves. */
    @Test
    void poolMemoryReadByAPeerGpuIsRefused() {
        List<CudaDevice> gpus = GpuSet.own(2).cuda();
        List<CUdeviceptr> mine = new ArrayList<>();
        List<CUstream> streams = new ArrayList<>();
        List<Replica> replicas = new ArrayList<>();
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.PTX, gpus)) {
            for (CudaDevice d : gpus) {
                bindPrimary(d);
                CUstream s = new CUstream();
                check(cuStreamCreate(s, 0));
                streams.add(s);
                CUdeviceptr p = new CUdeviceptr();
                check(cuMemAllocAsync(p, (long) N * 4, s));
                check(cuStreamSynchronize(s));
                check(cuMemcpyHtoD(p, Pointer.to(fill(d.ordinal())), (long) N * 4));
                mine.add(p);
                replicas.add(Replica.on(d).add("w", d.wrap(address(p), (long) N * 4), DType.FP32).build());
            }
            assertMessage(() -> sync.synchronize(replicas), "stream-ordered pool memory");
            float[] got = new float[N];
            check(cuMemcpyDtoH(Pointer.to(got), mine.get(1), (long) N * 4));
            assertEquals(1f, got[0]); // untouched
        } finally {
            for (int i = 0; i < mine.size(); i++) {
                bindPrimary(gpus.get(i));
                check(cuMemFreeAsync(mine.get(i), streams.get(i)));
                check(cuStreamSynchronize(streams.get(i)));
                check(cuStreamDestroy(streams.get(i)));
            }
        }
    }

    @Test
    void badPointersAreRejectedThroughTheDriver() {
        CudaDevice d = GpuSet.own(1).cuda().getFirst();
        CUdeviceptr p = userAlloc(d, 1 << 20);
        long a = address(p);
        assertMessage(() -> d.wrap(a, (1 << 20) + 4), "runs past the end of its allocation");
        assertMessage(() -> d.wrap(a + 4096, 1 << 20), "runs past the end of its allocation");
        assertMessage(() -> d.wrap(0, 16), "null");
        assertMessage(() -> d.wrap(a, 0), "positive");
        try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
            long host = arena.allocate(4096).address();
            assertMessage(() -> d.wrap(host, 4096), "does not know this address");
        }
        Pointer pinned = new Pointer();
        check(cuMemHostAlloc(pinned, 4096, 0));
        long pinnedAddress = java.lang.foreign.MemorySegment.ofBuffer(pinned.getByteBuffer(0, 1)).address();
        assertMessage(() -> d.wrap(pinnedAddress, 4096), "page-locked host memory");
        check(cuMemFreeHost(pinned));
        d.wrap(a, 1 << 20).close();
        check(cuMemFree(p));
        assertMessage(() -> d.wrap(a, 1 << 20), "does not know this address"); // freed
        List<CudaDevice> gpus = CudaRuntime.devices();
        if (gpus.size() > 1) {
            CUdeviceptr other = userAlloc(gpus.get(1), 4096);
            assertMessage(() -> d.wrap(address(other), 4096), "belongs to cuda:1");
            check(cuMemFree(other));
        }
        CudaDevice logical = d.logical(7);
        logical.close();
        assertThrows(IllegalStateException.class, () -> logical.wrap(a, 16));
    }

    /**
     * The caller's stream is busy (a chain of copies) and ends by writing the gradient; the sync is
     * asynchronous with no device-wide wait, and the caller's next work on its stream copies the
     * result out: it must see the average, so the sync ran after the caller's work and before its
     * next work, with no host wait in between.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"ptx", "cpu"})
    void callerStreamsOrderTheAverageWithoutAHostWait(String backend) {
        List<CudaDevice> devices = CudaRuntime.logicalDevices(2, 1);
        SyncOptions options = SyncOptions.defaults().withWaitForCaller(false);
        List<CUstream> theirs = new ArrayList<>();
        List<CUdeviceptr> mine = new ArrayList<>();
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.parse(backend), devices, options)) {
            for (int round = 0; round < 3; round++) {
                List<Replica> replicas = new ArrayList<>();
                for (int r = 0; r < 2; r++) {
                    CudaDevice d = devices.get(r);
                    bindPrimary(d);
                    CUstream s = new CUstream();
                    check(cuStreamCreate(s, 1)); // non-blocking, as frameworks make them
                    theirs.add(s);
                    CUdeviceptr grad = userAlloc(d, (long) N * 4);
                    CUdeviceptr busy = userAlloc(d, 64L << 20);
                    mine.add(grad);
                    mine.add(busy);
                    check(cuMemsetD32Async(grad, Float.floatToRawIntBits(Float.NaN), N, s));
                    for (int k = 0; k < 40; k++) { // ~ milliseconds of work ahead of the gradient
                        check(cuMemcpyDtoDAsync(busy, busy.withByteOffset(32L << 20), 32L << 20, s));
                    }
                    check(cuMemsetD32Async(grad, Float.floatToRawIntBits(r + round), N, s));
                    CudaStream wrapped = d.wrapStream(streamAddress(s));
                    assertFalse(wrapped.isOwned());
                    replicas.add(Replica.on(d).add("w", d.wrap(address(grad), (long) N * 4), DType.FP32).stream(wrapped).build());
                }
                SyncHandle h = sync.synchronizeAsync(replicas);
                for (int r = 0; r < 2; r++) {
                    float[] got = new float[N];
                    // the "optimizer": queued on the caller's stream right away, reads what the sync left
                    Pointer host = new Pointer();
                    check(cuMemHostAlloc(host, (long) N * 4, 0));
                    check(JCudaDriver.cuMemcpyDtoHAsync(host, mine.get(2 * r + 4 * round), (long) N * 4, theirs.get(2 * round + r)));
                    check(cuStreamSynchronize(theirs.get(2 * round + r)));
                    host.getByteBuffer(0, (long) N * 4).order(java.nio.ByteOrder.nativeOrder()).asFloatBuffer().get(got);
                    check(cuMemFreeHost(host));
                    for (int i = 0; i < N; i += 4099) {
                        assertEquals(0.5f + round, got[i], "round " + round + " replica " + r + " element " + i);
                    }
                }
                h.await();
                assertTrue(h.isDone());
            }
        } finally {
            for (CUdeviceptr p : mine) {
                cuMemFree(p);
            }
            for (CUstream s : theirs) {
                cuStreamDestroy(s);
            }
        }
    }

    /** JCuda prints a stream's handle ({@code CUstream[nativePointer=0x...]}) but has no getter for it. */
    private static long streamAddress(CUstream s) {
        String text = s.toString();
        return Long.parseUnsignedLong(text.substring(text.indexOf("0x") + 2, text.indexOf(']')), 16);
    }

    @Test
    void badStreamsAreRejected() throws Exception {
        CudaDevice d = GpuSet.own(1).cuda().getFirst();
        bindPrimary(d);
        CUstream s = new CUstream();
        check(cuStreamCreate(s, 1));
        long live = streamAddress(s);
        try (CudaStream ok = d.wrapStream(live)) {
            assertEquals(live, ok.address());
        }
        d.wrapStream(0).close(); // the legacy default stream
        check(cuStreamDestroy(s));
        // made-up handles crash the driver unless caught first (a destroyed stream cannot be told apart,
        // README says so): asked in a child JVM, so that a crash fails this test instead of ending the run
        String out = probeInChild(0x1234_5678_9abcL, 0x7fff_0000_1000L, 48);
        assertTrue(out.contains("rejected 0x") && !out.contains("accepted"), out);
    }

    private static String probeInChild(long... handles) throws Exception {
        String java = ProcessHandle.current().info().command().orElse("java");
        // under the JUnit console the test classes are not on java.class.path: name their jars and JCuda's folder
        String jcudaDir = new File(JCudaDriver.class.getProtectionDomain().getCodeSource().getLocation().toURI()).getParent();
        String cp = String.join(File.pathSeparator, System.getProperty("java.class.path"), jarOf(StreamProbe.class),
                jarOf(CudaDevice.class), jarOf(JCudaDriver.class), jcudaDir + File.separator + "*");
        List<String> cmd = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED", "-cp", cp,
                StreamProbe.class.getName()));
        for (long h : handles) {
            cmd.add(Long.toString(h));
        }
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.PIPE).start();
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "probe finished");
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), () -> "the probe JVM must survive bad stream handles; it printed:\n" + out);
        return out;
    }

    private static String jarOf(Class<?> c) throws java.net.URISyntaxException {
        return new File(c.getProtectionDomain().getCodeSource().getLocation().toURI()).getPath();
    }

    /** Child JVM: wraps each handle and says whether it was rejected; a crash is the failure. */
    public static final class StreamProbe {
        public static void main(String[] args) {
            CudaDevice d = CudaRuntime.device(0);
            for (String a : args) {
                long h = Long.parseLong(a);
                try {
                    d.wrapStream(h);
                    System.out.println("accepted 0x" + Long.toHexString(h));
                } catch (IllegalArgumentException e) {
                    System.out.println("rejected 0x" + Long.toHexString(h) + ": " + e.getMessage());
                }
            }
        }
    }

    private static void assertMessage(org.junit.jupiter.api.function.Executable call, String part) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertTrue(e.getMessage().contains(part), () -> "expected '" + part + "' in: " + e.getMessage());
    }

    static {
        JCudaDriver.setExceptionsEnabled(false);
        assert File.separator != null;
    }
}
