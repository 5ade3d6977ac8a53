package io.gradsync.tasks.api;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A named sequence of kernel tasks and the transfers around them, built fluently:
 * <pre>{@code
 * TaskGraph graph = new TaskGraph("average")
 *     .transferToDevice(DataTransferMode.EVERY_EXECUTION, a, b)
 *     .task("avg", AverageKernels::average2, out, a, b, 2f)
 *     .transferToHost(DataTransferMode.EVERY_EXECUTION, out);
 * ImmutableTaskGraph snapshot = graph.snapshot();
 * }</pre>
 * A graph only describes work; an execution plan runs a {@link #snapshot() snapshot} on devices.
 * Arguments are checked against the kernel's signature when the task is added, so a mistake
 * surfaces where it was made. Not thread safe (snapshots are).
 */
public final class TaskGraph {
    private final String name;
    private final List<ImmutableTaskGraph.Step> steps = new ArrayList<>();
    private final Set<String> taskNames = new HashSet<>();

    /** @throws IllegalArgumentException if {@code name} is null or blank (errors and logs name the graph) */
    public TaskGraph(String name) {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("a task graph needs a name, got " + (name == null ? "null" : "'" + name + "'"));
        }
        this.name = name;
    }

    public String name() {
        return name;
    }

    /** Copies {@code arrays} from the host to every device whose tasks use them, before the following tasks. */
    public TaskGraph transferToDevice(DataTransferMode mode, KernelArray... arrays) {
        steps.add(new ImmutableTaskGraph.CopyIn(mode, transferred("transferToDevice", mode, arrays)));
        return this;
    }

    /** Copies {@code arrays} back to the host after the preceding tasks. */
    public TaskGraph transferToHost(DataTransferMode mode, KernelArray... arrays) {
        steps.add(new ImmutableTaskGraph.CopyOut(mode, transferred("transferToHost", mode, arrays)));
        return this;
    }

    /** The arrays of a transfer, checked: a mode, and no array null. */
    private List<KernelArray> transferred(String call, DataTransferMode mode, KernelArray[] arrays) {
        if (mode == null) {
            throw new IllegalArgumentException(name + ": " + call + " needs a DataTransferMode (FIRST_EXECUTION or EVERY_EXECUTION), got null");
        }
        if (arrays == null) {
            throw new IllegalArgumentException(name + ": " + call + " got a null array of arrays");
        }
        for (int i = 0; i < arrays.length; i++) {
            if (arrays[i] == null) {
                throw new IllegalArgumentException(name + ": " + call + " got null as array " + (i + 1) + " of " + arrays.length);
            }
        }
        return List.of(arrays);
    }

    /**
     * Adds a task running the static {@code kernel} with {@code args}: one per Java parameter,
     * arrays as {@link KernelArray}s, scalars boxed; for a KernelContext parameter pass
     * {@code null} (the plan supplies the context) or leave it out.
     */
    public TaskGraph task(String taskName, Method kernel, Object... args) {
        if (taskNames.contains(taskName)) {
            throw new IllegalArgumentException("graph " + name + " already has a task named " + taskName);
        }
        if (!Modifier.isStatic(kernel.getModifiers())) {
            throw new IllegalArgumentException(taskName + ": kernel " + kernel + " is not static");
        }
        List<Class<?>> expected = new ArrayList<>();
        Class<?>[] types = kernel.getParameterTypes();
        if (args.length == types.length && args.length > 0) {
            // a method reference passes every parameter: drop the KernelContext placeholders
            List<Object> kept = new ArrayList<>();
            for (int i = 0; i < types.length; i++) {
                if (types[i] != KernelContext.class) {
                    kept.add(args[i]);
                } else if (args[i] != null && !(args[i] instanceof KernelContext)) {
                    throw new IllegalArgumentException(taskName + ": argument " + i + " of " + kernel.getName() + " is the KernelContext; pass null");
                }
            }
            args = kept.toArray();
        }
        for (Class<?> t : types) {
            if (t != KernelContext.class) {
                expected.add(t);
            }
        }
        if (args.length != expected.size()) {
            throw new IllegalArgumentException(taskName + ": " + kernel.getName() + " takes " + expected.size() + " arguments, got " + args.length);
        }
        for (int i = 0; i < args.length; i++) {
            Class<?> t = expected.get(i);
            Object a = args[i];
            boolean ok = t.isPrimitive() ? a != null && wrapperOf(t).isInstance(a) : t.isInstance(a);
            if (!ok) {
                throw new IllegalArgumentException(taskName + ": argument " + i + " of " + kernel.getName() + " must be " + t.getSimpleName()
                        + ", got " + (a == null ? "null" : a.getClass().getSimpleName()));
            }
        }
        taskNames.add(taskName);
        steps.add(new ImmutableTaskGraph.Run(taskName, kernel, List.of(args)));
        return this;
    }

    public <A> TaskGraph task(String name, KernelFunctions.K1<A> kernel, A a) {
        return task(name, KernelFunctions.methodOf(kernel), a);
    }

    public <A, B> TaskGraph task(String name, KernelFunctions.K2<A, B> kernel, A a, B b) {
        return task(name, KernelFunctions.methodOf(kernel), a, b);
    }

    public <A, B, C> TaskGraph task(String name, KernelFunctions.K3<A, B, C> kernel, A a, B b, C c) {
        return task(name, KernelFunctions.methodOf(kernel), a, b, c);
    }

    public <A, B, C, D> TaskGraph task(String name, KernelFunctions.K4<A, B, C, D> kernel, A a, B b, C c, D d) {
        return task(name, KernelFunctions.methodOf(kernel), a, b, c, d);
    }

    public <A, B, C, D, E> TaskGraph task(String name, KernelFunctions.K5<A, B, C, D, E> kernel, A a, B b, C c, D d, E e) {
        return task(name, KernelFunctions.methodOf(kernel), a, b, c, d, e);
    }

    public <A, B, C, D, E, F> TaskGraph task(String name, KernelFunctions.K6<A, B, C, D, E, F> kernel, A a, B b, C c, D d, E e, F f) {
        return task(name, KernelFunctions.methodOf(kernel), a, b, c, d, e, f);
    }

    public <A, B, C, D, E, F, G> TaskGraph task(String name, KernelFunctions.K7<A, B, C, D, E, F, G> kernel, A a, B b, C c, D d, E e, F f, G g) {
        return task(name, KernelFunctions.methodOf(kernel), a, b, c, d, e, f, g);
    }

    public <A, B, C, D, E, F, G, H> TaskGraph task(String name, KernelFunctions.K8<A, B, C, D, E, F, G, H> kernel, A a, B b, C c, D d, E e, F f, G g, H h) {
        return task(name, KernelFunctions.methodOf(kernel), a, b, c, d, e, f, g, h);
    }

    public <A, B, C, D, E, F, G, H, I> TaskGraph task(String name, KernelFunctions.K9<A, B, C, D, E, F, G, H, I> kernel, A a, B b, C c, D d, E e, F f, G g, H h, I i) {
        return task(name, KernelFunctions.methodOf(kernel), a, b, c, d, e, f, g, h, i);
    }

    public <A, B, C, D, E, F, G, H, I, J> TaskGraph task(String name, KernelFunctions.K10<A, B, C, D, E, F, G, H, I, J> kernel, A a, B b, C c, D d, E e, F f, G g, H h, I i, J j) {
        return task(name, KernelFunctions.methodOf(kernel), a, b, c, d, e, f, g, h, i, j);
    }

    public <A, B, C, D, E, F, G, H, I, J, K> TaskGraph task(String name, KernelFunctions.K11<A, B, C, D, E, F, G, H, I, J, K> kernel, A a, B b, C c, D d, E e, F f, G g, H h, I i, J j, K k) {
        return task(name, KernelFunctions.methodOf(kernel), a, b, c, d, e, f, g, h, i, j, k);
    }

    public <A, B, C, D, E, F, G, H, I, J, K, L> TaskGraph task(String name, KernelFunctions.K12<A, B, C, D, E, F, G, H, I, J, K, L> kernel, A a, B b, C c, D d, E e, F f, G g, H h, I i, J j, K k, L l) {
        return task(name, KernelFunctions.methodOf(kernel), a, b, c, d, e, f, g, h, i, j, k, l);
    }

    /** An immutable copy of the graph as it is now; later changes to this graph do not affect it. */
    public ImmutableTaskGraph snapshot() {
        return new ImmutableTaskGraph(name, steps);
    }

    private static Class<?> wrapperOf(Class<?> primitive) {
        return switch (primitive.getName()) {
            case "int" -> Integer.class;
            case "long" -> Long.class;
            case "float" -> Float.class;
            case "double" -> Double.class;
            case "short" -> Short.class;
            case "byte" -> Byte.class;
            case "char" -> Character.class;
            default -> Boolean.class;
        };
    }
}
