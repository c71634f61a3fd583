package org.sss.server.execution;

import java.lang.reflect.InvocationTargetException;

/** Creates user objects (mappers, reducers, serdes, partitioners) by class name. */
final class UserClasses {
  private UserClasses() {}

  /**
   * Each failure says what to do about it: a class the node cannot find is almost always a job
   * submitted without its JAR (from a user's own {@code main} against a running cluster), not a
   * class without a constructor.
   */
  static <T> T create(ClassLoader loader, String className, Class<T> type) {
    Class<?> c;
    try {
      c = Class.forName(className, true, loader);
    } catch (ExceptionInInitializerError e) {
      throw new UserCodeException("cannot load " + type.getSimpleName() + " class " + className
          + ": its static initializer failed", e.getCause() != null ? e.getCause() : e);
    } catch (ClassNotFoundException | NoClassDefFoundError e) {
      String why = e.getMessage() == null ? "" : e.getMessage();
      if (e instanceof NoClassDefFoundError && why.startsWith("Could not initialize class")) {
        // found, but its static initializer failed on an earlier use in this JVM: no JAR would help
        throw new UserCodeException("cannot load " + type.getSimpleName() + " class " + className
            + ": its static initializer failed (on an earlier use on this node)", e);
      }
      String missing = e instanceof NoClassDefFoundError && !why.isEmpty() ? why.replace('/', '.') : className;
      throw new UserCodeException("cannot find " + type.getSimpleName() + " class " + className
          + (missing.equals(className) ? "" : " (it needs " + missing + ")")
          + " on this node: ship the job's classes with Job.Builder.jarByClass(YourJob.class) or .jar(path)"
          + " (they must be in a JAR), or submit the job with 'bin/sss run --jar JAR'", e);
    }
    if (!type.isAssignableFrom(c)) {
      throw new IllegalArgumentException(className + " is not a " + type.getSimpleName());
    }
    try {
      var ctor = c.getDeclaredConstructor();
      ctor.setAccessible(true);
      return type.cast(ctor.newInstance());
    } catch (NoSuchMethodException e) {
      throw new UserCodeException("cannot create " + type.getSimpleName() + " " + className
          + ": it needs a no-argument constructor (a nested class must be static)", e);
    } catch (ReflectiveOperationException e) {
      throw new UserCodeException("cannot create " + type.getSimpleName() + " " + className + ": its constructor"
          + " failed", e instanceof InvocationTargetException ite && ite.getCause() != null
          ? ite.getCause() : e);
    }
  }
}
