package io.gradsync.tasks.testing;

import io.gradsync.tasks.api.KernelArray;
import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.ir.KernelParam;
import org.jocl.CL;
import org.jocl.Pointer;
import org.jocl.Sizeof;
import org.jocl.cl_command_queue;
import org.jocl.cl_context;
import org.jocl.cl_context_properties;
import org.jocl.cl_device_id;
import org.jocl.cl_kernel;
import org.jocl.cl_mem;
import org.jocl.cl_platform_id;
import org.jocl.cl_program;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import static org.jocl.CL.*;

/**
 * Test helper: builds generated OpenCL C on the first OpenCL device (PoCL on CPU in CI) through
 * JOCL and runs a kernel on {@link KernelArray}s, copying them in and back out. Stands in for the
 * OpenCL runtime until tests switch to it.
 */
public final class PoclRunner implements DeviceRunner, AutoCloseable {
    private static PoclRunner shared;

    private final cl_device_id device;
    private final cl_context context;
    private final cl_command_queue queue;

    private PoclRunner(cl_platform_id platform, cl_device_id device) {
        this.device = device;
        cl_context_properties props = new cl_context_properties();
        props.addProperty(CL_CONTEXT_PLATFORM, platform);
        this.context = clCreateContext(props, 1, new cl_device_id[]{device}, null, null, null);
        this.queue = clCreateCommandQueue(context, device, 0, null);
    }

    /** The shared runner, or null when no OpenCL platform is usable here. */
    public static synchronized PoclRunner sharedOrNull() {
        if (shared == null) {
            try {
                CL.setExceptionsEnabled(true);
                int[] n = new int[1];
                clGetPlatformIDs(0, null, n);
                if (n[0] == 0) {
                    return null;
                }
                cl_platform_id[] platforms = new cl_platform_id[n[0]];
                clGetPlatformIDs(n[0], platforms, null);
                cl_device_id[] devices = new cl_device_id[1];
                clGetDeviceIDs(platforms[0], CL_DEVICE_TYPE_ALL, 1, devices, null);
                shared = new PoclRunner(platforms[0], devices[0]);
            } catch (Throwable t) {
                return null;
            }
        }
        return shared;
    }

    @Override
    public String name() {
        return "OpenCL";
    }

    /** Builds {@code source}; on failure the exception carries the build log. */
    public cl_program build(String source, String options) {
        cl_program program = clCreateProgramWithSource(context, 1, new String[]{source}, null, null);
        try {
            clBuildProgram(program, 0, null, options, null, null);
        } catch (RuntimeException e) {
            long[] size = new long[1];
            clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, null, size);
            byte[] log = new byte[(int) size[0]];
            clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, log.length, Pointer.to(log), null);
            throw new AssertionError("OpenCL build failed: " + new String(log).trim() + "\n--- source ---\n" + source, e);
        }
        return program;
    }

    /**
     * Runs {@code kernel} with {@code args} (one per Java parameter; null for a KernelContext),
     * {@code globalSize} threads in groups of {@code localSize}; array contents are copied back.
     */
    @Override
    public void run(CompiledKernel kernel, Object[] args, long globalSize, long localSize) {
        cl_program program = build(kernel.openCl(), "");
        cl_kernel k = clCreateKernel(program, kernel.entryName(), null);
        List<cl_mem> buffers = new ArrayList<>();
        List<KernelArray> arrays = new ArrayList<>();
        try {
            int argIndex = 0;
            for (KernelParam p : kernel.parameters()) {
                Object arg = args[p.javaIndex()];
                switch (p) {
                    case KernelParam.ArrayParam a -> {
                        KernelArray array = (KernelArray) arg;
                        ByteBuffer bb = array.segment().asByteBuffer();
                        long bytes = Math.max(1, array.segment().byteSize());
                        cl_mem mem = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, Pointer.to(bb), null);
                        buffers.add(mem);
                        arrays.add(array);
                        clSetKernelArg(k, argIndex++, Sizeof.cl_mem, Pointer.to(mem));
                        clSetKernelArg(k, argIndex++, Sizeof.cl_int, Pointer.to(new int[]{array.getSize()}));
                    }
                    case KernelParam.ScalarParam s -> {
                        switch (s.type()) {
                            case I32 -> clSetKernelArg(k, argIndex++, Sizeof.cl_int, Pointer.to(new int[]{((Number) arg).intValue()}));
                            case I64 -> clSetKernelArg(k, argIndex++, Sizeof.cl_long, Pointer.to(new long[]{((Number) arg).longValue()}));
                            case F32 -> clSetKernelArg(k, argIndex++, Sizeof.cl_float, Pointer.to(new float[]{((Number) arg).floatValue()}));
                            case F64 -> clSetKernelArg(k, argIndex++, Sizeof.cl_double, Pointer.to(new double[]{((Number) arg).doubleValue()}));
                        }
                    }
                    case KernelParam.ContextParam c -> {
                    }
                }
            }
            clEnqueueNDRangeKernel(queue, k, 1, null, new long[]{globalSize}, new long[]{localSize}, 0, null, null);
            for (int i = 0; i < buffers.size(); i++) {
                KernelArray array = arrays.get(i);
                clEnqueueReadBuffer(queue, buffers.get(i), CL_TRUE, 0, array.segment().byteSize(),
                        Pointer.to(array.segment().asByteBuffer()), 0, null, null);
            }
            clFinish(queue);
        } finally {
            buffers.forEach(CL::clReleaseMemObject);
            clReleaseKernel(k);
            clReleaseProgram(program);
        }
    }

    @Override
    public void close() {
        clReleaseCommandQueue(queue);
        clReleaseContext(context);
    }
}
