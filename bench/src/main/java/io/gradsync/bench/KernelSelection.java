package io.gradsync.bench;

import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.access.KernelIrs;
import io.gradsync.tasks.compiler.ir.KernelParam;
import io.gradsync.tasks.kernels.BuiltinKernels;
import io.gradsync.tasks.kernels.KernelSpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/** Which kernels {@link KernelCompare} times: built-ins by name, users' kernels by class. */
public final class KernelSelection {
    private KernelSelection() {
    }

    /** As {@link #select(String, ClassLoader)} with the thread's context class loader. */
    public static List<KernelSpec> select(String list) {
        return select(list, Thread.currentThread().getContextClassLoader()).specs();
    }

    /** The kernels to time, and the methods of users' classes left out, each with why. */
    public record Selection(List<KernelSpec> specs, List<String> leftOut) {
    }

    /**
     * The kernels named in {@code list} (comma separated), or every built-in for null/"all". A
     * built-in goes by its name; a user's kernel class by its binary name ({@code com.acme.MyKernels}:
     * each of its public static methods that gradsync compiles) or one of its kernels
     * ({@code com.acme.MyKernels#adamW}), loaded through {@code loader}.
     */
    public static Selection select(String list, ClassLoader loader) {
        if (list == null || list.isBlank() || list.trim().equalsIgnoreCase("all")) {
            return new Selection(BuiltinKernels.all(), List.of());
        }
        List<KernelSpec> specs = new ArrayList<>();
        List<String> leftOut = new ArrayList<>();
        for (String name : list.split(",")) {
            if (name.isBlank()) {
                continue;
            }
            String n = name.trim();
            Optional<KernelSpec> builtin = BuiltinKernels.byName(n);
            if (builtin.isPresent()) {
                specs.add(builtin.get());
            } else if (n.contains(".") || n.contains("#") || loads(n, loader)) {
                specs.addAll(usersKernels(n, loader, leftOut));
            } else {
                throw new IllegalArgumentException("unknown kernel '" + n + "'; see gradsync kernels for the built-ins,"
                        + " or name a class of your own (com.acme.MyKernels[#method], found through --class-path)");
            }
        }
        if (specs.isEmpty()) {
            throw new IllegalArgumentException("no kernel named in '" + list + "'");
        }
        return new Selection(specs, leftOut);
    }

    /** A type a kernel may take: a class's other methods (a {@code main}, say) are not listed as left out. */
    private static boolean kernelParameterType(Class<?> type) {
        return type.isPrimitive() || type == io.gradsync.tasks.api.KernelContext.class
                || io.gradsync.tasks.api.KernelArray.class.isAssignableFrom(type);
    }

    private static boolean loads(String className, ClassLoader loader) {
        try {
            Class.forName(className, false, loader);
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    /** {@code com.acme.MyKernels} (its kernels) or {@code com.acme.MyKernels#adamW} (that one), as specs. */
    private static List<KernelSpec> usersKernels(String name, ClassLoader loader, List<String> leftOut) {
        int hash = name.indexOf('#');
        String className = hash < 0 ? name : name.substring(0, hash);
        String method = hash < 0 ? null : name.substring(hash + 1);
        Class<?> owner;
        try {
            owner = Class.forName(className, false, loader);
        } catch (ClassNotFoundException | LinkageError e) {
            throw new IllegalArgumentException("kernel class '" + className + "' not found on the class path"
                    + " (give its jars or folders with --class-path): " + e);
        }
        List<KernelSpec> specs = new ArrayList<>();
        List<String> rejected = new ArrayList<>();
        for (java.lang.reflect.Method m : owner.getDeclaredMethods()) {
            int mod = m.getModifiers();
            boolean candidate = java.lang.reflect.Modifier.isPublic(mod) && java.lang.reflect.Modifier.isStatic(mod)
                    && !m.isSynthetic() && m.getReturnType() == void.class
                    && (method != null || Arrays.stream(m.getParameterTypes()).allMatch(KernelSelection::kernelParameterType));
            if (!candidate || method != null && !m.getName().equals(method)) {
                continue;
            }
            String label = owner.getSimpleName() + "." + m.getName();
            try {
                CompiledKernel k = io.gradsync.tasks.compiler.KernelCompiler.shared().compile(m);
                if (KernelIrs.parameters(k).stream().noneMatch(p -> p instanceof KernelParam.ArrayParam)) {
                    throw new IllegalArgumentException("it has no array parameter");
                }
                if (k.usesGroups() || k.usesWarps()) {
                    // its group size is its own choice, which one thread per element of 256 per group would break
                    throw new IllegalArgumentException("it uses barriers, group-local memory or warps, so its launch shape is"
                            + " its own: time it in a plan of yours");
                }
                specs.add(new KernelSpec(label, m, k.style(), 0));
            } catch (RuntimeException e) {
                rejected.add(label + ": " + Messages.firstLine(e));
            }
        }
        if (specs.isEmpty()) {
            throw new IllegalArgumentException(method == null
                    ? "no kernel gradsync compiles in " + className + (rejected.isEmpty() ? " (no public static void method)" : ": " + String.join("; ", rejected))
                    : rejected.isEmpty() ? "no public static void method " + method + " in " + className : "not a kernel gradsync compiles: " + rejected.getFirst());
        }
        specs.sort(java.util.Comparator.comparing(KernelSpec::name));
        leftOut.addAll(rejected);
        return specs;
    }
}
