package org.sss.client.it;

/** The store's contract on an embedded cluster of 1 node(s). */
class EmbeddedOneNodeClusterTest extends EmbeddedClusterContract {
  @Override
  int nodes() {
    return 1;
  }
}
