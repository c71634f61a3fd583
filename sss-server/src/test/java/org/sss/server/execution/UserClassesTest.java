package org.sss.server.execution;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.sss.core.api.Emitter;
import org.sss.core.api.Mapper;

/** Each way user classes fail to load names what to do about it. */
class UserClassesTest {
  /** Not static: it has no no-argument constructor. */
  public class Inner implements Mapper<Long, Long, Long, Long> {
    @Override
    public void map(Long key, Long value, Emitter<Long, Long> out) {}
  }

  public static final class Throwing implements Mapper<Long, Long, Long, Long> {
    public Throwing() {
      throw new IllegalStateException("setup of Throwing broke");
    }

    @Override
    public void map(Long key, Long value, Emitter<Long, Long> out) {}
  }

  public static final class Fine implements Mapper<Long, Long, Long, Long> {
    @Override
    public void map(Long key, Long value, Emitter<Long, Long> out) {}
  }

  public static final class BrokenStatics implements Mapper<Long, Long, Long, Long> {
    static final int BROKEN = Integer.parseInt("not a number");

    @Override
    public void map(Long key, Long value, Emitter<Long, Long> out) {}
  }

  private final ClassLoader loader = getClass().getClassLoader();

  @Test
  void aClassTheNodeCannotFind_saysHowToShipIt() {
    UserCodeException e = assertThrows(UserCodeException.class,
        () -> UserClasses.create(loader, "com.example.MyJob$Sum", Mapper.class));
    assertTrue(e.getMessage().startsWith("cannot find Mapper class com.example.MyJob$Sum on this node: ship the"
        + " job's classes with Job.Builder.jarByClass(YourJob.class)"), e.getMessage());
    assertTrue(!e.getMessage().contains("no-argument"), e.getMessage());
  }

  @Test
  void aNestedClassThatIsNotStatic_saysSo() {
    UserCodeException e = assertThrows(UserCodeException.class,
        () -> UserClasses.create(loader, Inner.class.getName(), Mapper.class));
    assertTrue(e.getMessage().contains("needs a no-argument constructor (a nested class must be static)"),
        e.getMessage());
  }

  @Test
  void aConstructorThatThrows_showsTheUsersOwnException() {
    UserCodeException e = assertThrows(UserCodeException.class,
        () -> UserClasses.create(loader, Throwing.class.getName(), Mapper.class));
    assertTrue(e.getMessage().contains("its constructor failed"), e.getMessage());
    assertTrue(e.getMessage().contains("setup of Throwing broke"), e.getMessage());
  }

  /**
   * A class whose static initializer throws is on the node: the first task got an
   * ExceptionInInitializerError (no UserCodeException at all), later ones "cannot find ... ship
   * the job's classes", which sends the user after a JAR that is already there.
   */
  @Test
  void aClassWhoseStaticInitializerFails_saysSo_everyTime() {
    for (int attempt = 0; attempt < 2; attempt++) {
      UserCodeException e = assertThrows(UserCodeException.class,
          () -> UserClasses.create(loader, BrokenStatics.class.getName(), Mapper.class));
      assertTrue(e.getMessage().contains("its static initializer failed"), e.getMessage());
      assertTrue(!e.getMessage().contains("ship the job's classes"), e.getMessage());
    }
  }

  @Test
  void aGoodClass_isCreated() {
    assertInstanceOf(Fine.class, UserClasses.create(loader, Fine.class.getName(), Mapper.class));
  }
}
