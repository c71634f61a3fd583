package org.sss.server.execution;

/** Creates user objects (mappers, reducers, serdes, partitioners) by class name. */
final class UserClasses {
  private UserClasses() {}

  static <T> T create(ClassLoader loader, String className, Class<T> type) {
    try {
      Class<?> c = Class.forName(className, true, loader);
      if (!type.isAssignableFrom(c)) {
        throw new IllegalArgumentException(className + " is not a " + type.getSimpleName());
      }
      var ctor = c.getDeclaredConstructor();
      ctor.setAccessible(true);
      return type.cast(ctor.newInstance());
    } catch (ReflectiveOperationException e) {
      throw new UserCodeException("cannot create " + type.getSimpleName() + " " + className
          + " (it needs a public no-argument constructor)", e);
    }
  }
}
