package org.sss.kvs;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A store remembers the partition layout its data was written under, and keeps its data private. */
class LayoutRecordTest {
  @TempDir
  Path dir;

  @Test
  void reopenedUnderAnotherLayout_isRefusedNamingBoth() {
    try (NodeStore store = NodeStore.open(dir)) {
      store.checkLayout("P=24,map=aaaaaaaaaaaa");
    }
    try (NodeStore store = NodeStore.open(dir)) {
      StoreException e = assertThrows(StoreException.class, () -> store.checkLayout("P=12,map=bbbbbbbbbbbb"));
      assertTrue(e.getMessage().contains("P=24,map=aaaaaaaaaaaa") && e.getMessage().contains("P=12,map=bbbbbbbbbbbb"),
          e.getMessage());
      store.checkLayout("P=24,map=aaaaaaaaaaaa"); // the layout it was written under still opens it
    }
  }

  @Test
  void dataDirectory_isItsOwnersAlone() throws Exception {
    try (NodeStore store = NodeStore.open(dir.resolve("node"))) {
      assertTrue(java.nio.file.Files.getPosixFilePermissions(dir.resolve("node"))
          .equals(java.nio.file.attribute.PosixFilePermissions.fromString("rwx------")));
    }
  }
}
