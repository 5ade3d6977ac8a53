package io.gradsync.tasks.cuda.driver;

import static io.gradsync.tasks.cuda.driver.CudaCheck.check;
import static jcuda.driver.JCudaDriver.cuGraphDestroy;
import static jcuda.driver.JCudaDriver.cuGraphExecDestroy;
import static jcuda.driver.JCudaDriver.cuGraphInstantiate;
import static jcuda.driver.JCudaDriver.cuGraphLaunch;
import static jcuda.driver.JCudaDriver.cuStreamBeginCapture;
import static jcuda.driver.JCudaDriver.cuStreamEndCapture;

import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.cuda.CudaStream;
import jcuda.driver.CUgraph;
import jcuda.driver.CUgraphExec;
import jcuda.driver.CUstreamCaptureMode;

/**
 * Work enqueued once, replayed with one call: a CUDA graph captured from streams, possibly of
 * several GPUs. A schedule of tens of copies, kernels and cross-GPU event waits costs one driver
 * call per replay instead of one per operation, which is what small all-reduces are made of.
 *
 * <p>Capture starts on an origin stream; other streams join by waiting on an event recorded on a
 * captured stream, and must be joined back (the origin waits on their last events) before the
 * capture ends, or the driver refuses the graph. Kernel arguments and addresses are frozen at
 * capture: capture again when buffers change. Capture is thread-local, so other threads may keep
 * using CUDA meanwhile; the capturing thread must only enqueue.
 */
public final class CudaGraph implements AutoCloseable {
    private final CudaDevice device;
    private final CUgraph graph;
    private final CUgraphExec exec;
    private volatile boolean closed;

    private CudaGraph(CudaDevice device, CUgraph graph, CUgraphExec exec) {
        this.device = device;
        this.graph = graph;
        this.exec = exec;
    }

    /**
     * Captures what {@code enqueue} puts on {@code origin} and on the streams that join it. If
     * {@code enqueue} throws, the capture is ended and discarded and the exception passes on.
     */
    public static CudaGraph capture(CudaStream origin, Runnable enqueue) {
        CudaDevice device = origin.device();
        CudaHandles.bind(device);
        check(cuStreamBeginCapture(CudaHandles.stream(origin), CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
                "cuStreamBeginCapture", device.id());
        CUgraph graph = new CUgraph();
        try {
            enqueue.run();
        } catch (RuntimeException | Error e) {
            CudaHandles.bind(device);
            if (cuStreamEndCapture(CudaHandles.stream(origin), graph) == 0) {
                cuGraphDestroy(graph);
            }
            throw e;
        }
        CudaHandles.bind(device);
        check(cuStreamEndCapture(CudaHandles.stream(origin), graph), "cuStreamEndCapture", device.id());
        CUgraphExec exec = new CUgraphExec();
        int r = cuGraphInstantiate(exec, graph, 0);
        if (r != 0) {
            cuGraphDestroy(graph);
            check(r, "cuGraphInstantiate", device.id());
        }
        return new CudaGraph(device, graph, exec);
    }

    /** Enqueues one replay on {@code stream} (asynchronous; its work on every GPU follows the stream's prior work). */
    public void launch(CudaStream stream) {
        if (closed) {
            throw new IllegalStateException("graph captured on " + device.id() + " is closed");
        }
        CudaHandles.bind(stream.device());
        check(CudaHandles.onStream(stream, st -> cuGraphLaunch(exec, st)), "cuGraphLaunch", stream.device().id());
    }

    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            CudaHandles.bind(device);
            check(cuGraphExecDestroy(exec), "cuGraphExecDestroy", device.id());
            check(cuGraphDestroy(graph), "cuGraphDestroy", device.id());
        }
    }
}
