package io.gradsync.tasks.compiler;

import io.gradsync.tasks.api.KernelFunctions;

import java.lang.invoke.SerializedLambda;
import java.lang.reflect.Method;

/**
 * Resolves a kernel method reference ({@code GradientKernels::average2} typed as one of
 * {@link KernelFunctions}) to the static method it names, through the {@link SerializedLambda}
 * the JDK produces for serializable lambdas.
 */
public final class MethodReferences {
    private MethodReferences() {
    }

    /** The static method behind {@code ref}; rejects lambdas with bodies and instance-method references. */
    public static Method resolve(KernelFunctions.Kernel ref) {
        SerializedLambda lambda;
        try {
            Method writeReplace = ref.getClass().getDeclaredMethod("writeReplace");
            writeReplace.setAccessible(true);
            lambda = (SerializedLambda) writeReplace.invoke(ref);
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
            ClassLoader loader = ref.getClass().getClassLoader();
            Class<?> owner = Class.forName(lambda.getImplClass().replace('/', '.'), false, loader);
            String descriptor = lambda.getImplMethodSignature();
            for (Method m : owner.getDeclaredMethods()) {
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
}
