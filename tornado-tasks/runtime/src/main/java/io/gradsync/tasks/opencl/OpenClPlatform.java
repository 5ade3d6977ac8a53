package io.gradsync.tasks.opencl;

import static io.gradsync.tasks.opencl.OpenClCheck.check;
import static org.jocl.CL.CL_CONTEXT_PLATFORM;
import static org.jocl.CL.clCreateContext;

import org.jocl.cl_context;
import org.jocl.cl_context_properties;
import org.jocl.cl_device_id;
import org.jocl.cl_platform_id;

/**
 * One OpenCL platform and the single context that holds all its devices.
 *
 * <p>Thread-safety: immutable after discovery; share it freely.
 */
public final class OpenClPlatform {
    private final int index;
    private final String name;
    private final String version;
    private final cl_context context;

    OpenClPlatform(int index, cl_platform_id id, String name, String version, cl_device_id[] devices) {
        this.index = index;
        this.name = name;
        this.version = version;
        cl_context_properties props = new cl_context_properties();
        props.addProperty(CL_CONTEXT_PLATFORM, id);
        int[] rc = {0};
        this.context = clCreateContext(props, devices.length, devices, null, null, rc);
        check(rc[0], "clCreateContext", name);
    }

    public int index() {
        return index;
    }

    public String name() {
        return name;
    }

    public String version() {
        return version;
    }

    cl_context context() {
        return context;
    }
}
