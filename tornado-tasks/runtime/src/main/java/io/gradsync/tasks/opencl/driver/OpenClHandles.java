package io.gradsync.tasks.opencl.driver;

import io.gradsync.tasks.internal.Installed;
import io.gradsync.tasks.opencl.OpenClBuffer;
import io.gradsync.tasks.opencl.OpenClDevice;
import io.gradsync.tasks.opencl.OpenClQueue;
import java.util.function.Consumer;
import org.jocl.cl_command_queue;
import org.jocl.cl_mem;
import org.jocl.cl_program;

/**
 * The JOCL handles behind gradsync's OpenCL types, for gradsync's own kernel launcher. Kept out of
 * the exported API: this package is exported only to gradsync's modules, and
 * {@code io.gradsync.tasks.opencl} installs the access when its classes load.
 */
public final class OpenClHandles {
    /** What {@code io.gradsync.tasks.opencl} lets its own modules reach. */
    public interface Access {
        cl_mem memory(OpenClBuffer buffer);

        /** Runs {@code call} with the queue, which no other thread can close meanwhile. */
        void enqueue(OpenClQueue queue, Consumer<cl_command_queue> call);

        /** Builds {@code source} for the device with the compiler's {@code options}; the build log names {@code what}. */
        cl_program buildProgram(OpenClDevice device, String source, String options, String what);
    }

    private static final Installed<Access> ACCESS = new Installed<>("OpenCL handle", OpenClDevice.class);

    private OpenClHandles() {
    }

    /** Called once, by the package that owns the handles. */
    public static void install(Access implementation) {
        ACCESS.install(implementation);
    }

    public static cl_mem memory(OpenClBuffer buffer) {
        return ACCESS.get().memory(buffer);
    }

    public static void enqueue(OpenClQueue queue, Consumer<cl_command_queue> call) {
        ACCESS.get().enqueue(queue, call);
    }

    public static cl_program buildProgram(OpenClDevice device, String source, String options, String what) {
        return ACCESS.get().buildProgram(device, source, options, what);
    }
}
