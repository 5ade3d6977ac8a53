package io.gradsync.tasks.opencl.driver;

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

        /** Builds {@code source} for the device (cached per device and source); the build log names {@code what}. */
        cl_program buildProgram(OpenClDevice device, String source, String what);
    }

    private static volatile Access access;

    private OpenClHandles() {
    }

    /** Called once, by {@code io.gradsync.tasks.opencl}. */
    public static synchronized void install(Access implementation) {
        if (access != null) {
            throw new IllegalStateException("OpenCL handle access is installed already");
        }
        access = implementation;
    }

    public static cl_mem memory(OpenClBuffer buffer) {
        return access().memory(buffer);
    }

    public static void enqueue(OpenClQueue queue, Consumer<cl_command_queue> call) {
        access().enqueue(queue, call);
    }

    public static cl_program buildProgram(OpenClDevice device, String source, String what) {
        return access().buildProgram(device, source, what);
    }

    private static Access access() {
        Access a = access;
        if (a == null) {
            try { // OpenClDevice installs it in its static initializer
                Class.forName(OpenClDevice.class.getName(), true, OpenClDevice.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                throw new IllegalStateException(e);
            }
            a = access;
        }
        return a;
    }
}
