package io.gradsync.tasks.testing;

import io.gradsync.tasks.api.KernelArray;
import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.ir.KernelParam;
import jcuda.Pointer;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.JCudaDriver;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static jcuda.driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR;
import static jcuda.driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR;
import static jcuda.driver.JCudaDriver.*;

/**
 * Test helper: loads generated PTX for the GPU's own compute capability with
 * {@code cuModuleLoadData} (JCuda driver API) and runs a kernel on {@link KernelArray}s copied in
 * and back out. Stands in for the CUDA runtime until tests switch to it.
 */
public final class CudaRunner implements DeviceRunner {
    private static CudaRunner shared;
    private static boolean probed;

    private final CUcontext context = new CUcontext();
    private final int sm;

    private CudaRunner() {
        CUdevice device = new CUdevice();
        cuDeviceGet(device, 0);
        cuDevicePrimaryCtxRetain(context, device);
        cuCtxSetCurrent(context);
        int[] major = {0};
        int[] minor = {0};
        cuDeviceGetAttribute(major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
        cuDeviceGetAttribute(minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
        sm = major[0] * 10 + minor[0];
    }

    /** The shared runner on GPU 0, or null when there is no usable CUDA driver and GPU. */
    public static synchronized CudaRunner sharedOrNull() {
        if (!probed) {
            probed = true;
            try {
                JCudaDriver.setExceptionsEnabled(true);
                cuInit(0);
                int[] count = {0};
                cuDeviceGetCount(count);
                if (count[0] > 0) {
                    shared = new CudaRunner();
                }
            } catch (Throwable t) {
                shared = null;
            }
        }
        return shared;
    }

    /** Compute capability of GPU 0, e.g. 90. */
    public int sm() {
        return sm;
    }

    @Override
    public String name() {
        return "CUDA sm_" + sm;
    }

    @Override
    public synchronized void run(CompiledKernel kernel, Object[] args, long globalSize, long localSize) {
        cuCtxSetCurrent(context);
        CUmodule module = new CUmodule();
        cuModuleLoadData(module, (kernel.ptx(sm) + "\0").getBytes(StandardCharsets.US_ASCII));
        List<CUdeviceptr> buffers = new ArrayList<>();
        List<KernelArray> arrays = new ArrayList<>();
        try {
            CUfunction fn = new CUfunction();
            cuModuleGetFunction(fn, module, kernel.entryName());
            List<Pointer> params = new ArrayList<>();
            for (KernelParam p : kernel.parameters()) {
                Object arg = args[p.javaIndex()];
                switch (p) {
                    case KernelParam.ArrayParam a -> {
                        KernelArray array = (KernelArray) arg;
                        long bytes = array.segment().byteSize();
                        CUdeviceptr d = new CUdeviceptr();
                        cuMemAlloc(d, Math.max(bytes, 4));
                        cuMemcpyHtoD(d, Pointer.to(array.segment().asByteBuffer()), bytes);
                        buffers.add(d);
                        arrays.add(array);
                        params.add(Pointer.to(d));
                        params.add(Pointer.to(new int[]{array.getSize()}));
                    }
                    case KernelParam.ScalarParam s -> params.add(switch (s.type()) {
                        case I32 -> Pointer.to(new int[]{((Number) arg).intValue()});
                        case I64 -> Pointer.to(new long[]{((Number) arg).longValue()});
                        case F32 -> Pointer.to(new float[]{((Number) arg).floatValue()});
                        case F64 -> Pointer.to(new double[]{((Number) arg).doubleValue()});
                    });
                    case KernelParam.ContextParam c -> {
                    }
                }
            }
            int block = (int) localSize;
            int grid = (int) ((globalSize + localSize - 1) / localSize);
            cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, 0, null, Pointer.to(params.toArray(new Pointer[0])), null);
            cuCtxSynchronize();
            for (int i = 0; i < buffers.size(); i++) {
                KernelArray array = arrays.get(i);
                cuMemcpyDtoH(Pointer.to(array.segment().asByteBuffer()), buffers.get(i), array.segment().byteSize());
            }
        } finally {
            buffers.forEach(JCudaDriver::cuMemFree);
            cuModuleUnload(module);
        }
    }
}
