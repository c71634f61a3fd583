package org.sss.core.api;

/** A key and a value as bytes: keys in their order-preserving encoding, values as stored. */
public record Pair(byte[] key, byte[] value) {}
