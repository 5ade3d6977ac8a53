package io.gradsync.tasks.api;

import java.lang.reflect.Method;
import java.util.List;

/**
 * A frozen {@link TaskGraph}: the ordered steps an execution plan runs. The arrays are shared
 * with the graph (they are the data), the structure is not.
 *
 * <p>Thread-safety: immutable (the arrays it names are not: see their own contract); share it freely.
 */
public final class ImmutableTaskGraph {
    /** One step of a graph. */
    public sealed interface Step permits CopyIn, Run, CopyOut {
    }

    /** Host to device copies of {@code arrays}. */
    public record CopyIn(DataTransferMode mode, List<KernelArray> arrays) implements Step {
        public CopyIn {
            arrays = List.copyOf(arrays);
        }
    }

    /** A kernel task: {@code args} as given to {@link TaskGraph#task}. */
    public record Run(String name, Method kernel, List<Object> args) implements Step {
        public Run {
            args = List.copyOf(args);
        }
    }

    /** Device to host copies of {@code arrays}. */
    public record CopyOut(DataTransferMode mode, List<KernelArray> arrays) implements Step {
        public CopyOut {
            arrays = List.copyOf(arrays);
        }
    }

    private final String name;
    private final List<Step> steps;

    ImmutableTaskGraph(String name, List<Step> steps) {
        this.name = name;
        this.steps = List.copyOf(steps);
    }

    public String name() {
        return name;
    }

    public List<Step> steps() {
        return steps;
    }

    /** The kernel tasks, in order. */
    public List<Run> tasks() {
        return steps.stream().filter(s -> s instanceof Run).map(s -> (Run) s).toList();
    }
}
