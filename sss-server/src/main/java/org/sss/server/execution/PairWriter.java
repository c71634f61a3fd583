package org.sss.server.execution;

/** Where encoded map output goes: the shuffle, or a combining buffer's test. */
@FunctionalInterface
interface PairWriter {
  /** Writes one pair; the arrays may be reused by the caller once this returns. */
  void write(byte[] key, byte[] value) throws InterruptedException;
}
