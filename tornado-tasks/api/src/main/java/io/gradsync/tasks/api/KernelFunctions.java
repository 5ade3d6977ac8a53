package io.gradsync.tasks.api;

import java.io.Serializable;

/**
 * Functional interfaces for naming a kernel by method reference, e.g.
 * {@code taskGraph.task("avg", AverageKernels::average2, out, a, b, 2f)}.
 *
 * <p>They are {@link Serializable} for one reason: a serializable lambda can be asked (through
 * its {@code writeReplace} method) which class, method name and descriptor it refers to, which is
 * how the compiler finds the bytecode behind a method reference. The {@code apply} methods run
 * the kernel on the JVM.
 *
 * <p>Thread-safety: stateless static methods, callable from any thread at once.
 */
public final class KernelFunctions {
    private KernelFunctions() {
    }

    /** Marker shared by all arities. */
    public interface Kernel extends Serializable {
    }

    /**
     * The static method a kernel method reference names, through the {@code SerializedLambda}
     * the JDK produces for serializable lambdas; rejects lambda expressions and references to
     * instance methods.
     */
    public static java.lang.reflect.Method methodOf(Kernel ref) {
        java.lang.invoke.SerializedLambda lambda;
        try {
            java.lang.reflect.Method writeReplace = ref.getClass().getDeclaredMethod("writeReplace");
            if (!io.gradsync.tasks.internal.UserCode.open(writeReplace)) {
                Class<?> c = ref.getClass();
                throw new IllegalArgumentException("kernel " + c.getName() + ": its module " + c.getModule().getName()
                        + " does not open package " + c.getPackageName() + " to " + KernelFunctions.class.getModule().getName()
                        + " (add: opens " + c.getPackageName() + " to " + KernelFunctions.class.getModule().getName() + ";)");
            }
            lambda = (java.lang.invoke.SerializedLambda) writeReplace.invoke(ref);
        } catch (ReflectiveOperationException | ClassCastException e) {
            throw new IllegalArgumentException("not a method reference: " + ref.getClass().getName(), e);
        }
        if (lambda.getImplMethodKind() != java.lang.invoke.MethodHandleInfo.REF_invokeStatic) {
            throw new IllegalArgumentException("kernel must be a static method reference, got " + lambda.getImplClass() + "." + lambda.getImplMethodName());
        }
        if (lambda.getImplMethodName().startsWith("lambda$")) {
            throw new IllegalArgumentException("kernel must be a method reference (Class::method), not a lambda expression: "
                    + lambda.getImplClass() + "." + lambda.getImplMethodName());
        }
        try {
            Class<?> owner = Class.forName(lambda.getImplClass().replace('/', '.'), false, ref.getClass().getClassLoader());
            String descriptor = lambda.getImplMethodSignature();
            for (java.lang.reflect.Method m : owner.getDeclaredMethods()) {
                if (m.getName().equals(lambda.getImplMethodName())
                        && java.lang.invoke.MethodType.methodType(m.getReturnType(), m.getParameterTypes())
                        .toMethodDescriptorString().equals(descriptor)) {
                    return m;
                }
            }
            throw new IllegalArgumentException("method " + lambda.getImplMethodName() + descriptor + " not found in " + owner.getName());
        } catch (ClassNotFoundException e) {
            throw new IllegalArgumentException("class of method reference not found: " + lambda.getImplClass(), e);
        }
    }

    @FunctionalInterface
    public interface K1<A> extends Kernel {
        void apply(A a);
    }

    @FunctionalInterface
    public interface K2<A, B> extends Kernel {
        void apply(A a, B b);
    }

    @FunctionalInterface
    public interface K3<A, B, C> extends Kernel {
        void apply(A a, B b, C c);
    }

    @FunctionalInterface
    public interface K4<A, B, C, D> extends Kernel {
        void apply(A a, B b, C c, D d);
    }

    @FunctionalInterface
    public interface K5<A, B, C, D, E> extends Kernel {
        void apply(A a, B b, C c, D d, E e);
    }

    @FunctionalInterface
    public interface K6<A, B, C, D, E, F> extends Kernel {
        void apply(A a, B b, C c, D d, E e, F f);
    }

    @FunctionalInterface
    public interface K7<A, B, C, D, E, F, G> extends Kernel {
        void apply(A a, B b, C c, D d, E e, F f, G g);
    }

    @FunctionalInterface
    public interface K8<A, B, C, D, E, F, G, H> extends Kernel {
        void apply(A a, B b, C c, D d, E e, F f, G g, H h);
    }

    @FunctionalInterface
    public interface K9<A, B, C, D, E, F, G, H, I> extends Kernel {
        void apply(A a, B b, C c, D d, E e, F f, G g, H h, I i);
    }

    @FunctionalInterface
    public interface K10<A, B, C, D, E, F, G, H, I, J> extends Kernel {
        void apply(A a, B b, C c, D d, E e, F f, G g, H h, I i, J j);
    }

    @FunctionalInterface
    public interface K11<A, B, C, D, E, F, G, H, I, J, K> extends Kernel {
        void apply(A a, B b, C c, D d, E e, F f, G g, H h, I i, J j, K k);
    }

    @FunctionalInterface
    public interface K12<A, B, C, D, E, F, G, H, I, J, K, L> extends Kernel {
        void apply(A a, B b, C c, D d, E e, F f, G g, H h, I i, J j, K k, L l);
    }
}
