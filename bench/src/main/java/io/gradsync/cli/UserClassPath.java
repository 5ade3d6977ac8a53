package io.gradsync.cli;

import java.io.File;
import java.io.IOException;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** A user's class path as {@code java -cp} reads it (jars, folders, {@code dir/*} for a folder's jars), as a class loader. */
final class UserClassPath {
    private UserClassPath() {
    }

    /** {@code parent} itself for a null or blank path; an entry that does not exist is an error naming it. */
    static ClassLoader loader(String path, ClassLoader parent) {
        if (path == null || path.isBlank()) {
            return parent;
        }
        List<URL> urls = new ArrayList<>();
        for (String entry : path.split(File.pathSeparator)) {
            if (entry.isBlank()) {
                continue;
            }
            try {
                if (entry.endsWith("/*") || entry.equals("*")) {
                    Path dir = Path.of(entry.length() == 1 ? "." : entry.substring(0, entry.length() - 2));
                    if (!Files.isDirectory(dir)) {
                        throw new IllegalArgumentException("--class-path: no folder " + dir);
                    }
                    try (Stream<Path> jars = Files.list(dir)) {
                        for (Path jar : jars.filter(p -> p.toString().endsWith(".jar")).sorted().toList()) {
                            urls.add(jar.toUri().toURL());
                        }
                    }
                } else {
                    Path p = Path.of(entry);
                    if (!Files.exists(p)) {
                        throw new IllegalArgumentException("--class-path: no file or folder " + p);
                    }
                    urls.add(p.toUri().toURL());
                }
            } catch (MalformedURLException e) {
                throw new IllegalArgumentException("--class-path: " + entry + ": " + e.getMessage(), e);
            } catch (IOException e) {
                throw new IllegalArgumentException("--class-path: cannot list " + entry + ": " + e.getMessage(), e);
            }
        }
        return new URLClassLoader("gradsync-user", urls.toArray(URL[]::new), parent);
    }
}
