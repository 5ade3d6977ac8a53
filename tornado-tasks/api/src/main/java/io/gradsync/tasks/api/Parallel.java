package io.gradsync.tasks.api;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks the induction variable of a loop whose iterations are independent:
 * {@code for (@Parallel int i = 0; i < n; i++)}.
 *
 * <p>It is a {@code TYPE_USE} annotation with runtime retention because javac then records it in
 * the method's {@code RuntimeVisibleTypeAnnotations} (a LOCAL_VARIABLE target with the slot and
 * the live range), which is where the kernel compiler reads it back. On a device the loop becomes
 * a grid-stride loop: each thread starts at {@code init + globalIdx} and steps by
 * {@code globalSize}, so the result is the same for any launch size. On the JVM the loop simply
 * runs as written.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE_USE)
public @interface Parallel {
}
