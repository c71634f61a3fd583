package org.sss.kvs;

import org.rocksdb.RocksDBException;
import org.rocksdb.SstFileWriter;

/** Pairs in ascending key order without duplicates, written into an SST file: what {@link StoreTable#ingestRun} ingests. */
interface SortedRun {
  /** Puts every pair into {@code writer}; returns how many. */
  long writeTo(SstFileWriter writer) throws RocksDBException;
}
