package org.sss.client.it;

/** The store's contract on an embedded cluster of 3 node(s). */
class EmbeddedThreeNodeClusterTest extends EmbeddedClusterContract {
  @Override
  int nodes() {
    return 3;
  }
}
