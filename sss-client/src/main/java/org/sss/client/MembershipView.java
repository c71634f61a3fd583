package org.sss.client;

import java.util.List;

/**
 * The membership of a replicated cluster as its nodes decided it (through Raft), as
 * {@link SssClient#view()} reads it: which nodes are down, out of the in-sync copies, or
 * catching up, and who decides. A cluster of one copy has no membership: {@code replicated} is
 * false and every list is empty.
 *
 * @param replicated         false for a cluster of one copy
 * @param epoch              how many decisions made this view (0: none yet)
 * @param down               nodes that stopped answering but are still in sync: writes to their
 *                           partitions wait until they answer again or are decided out. Ascending
 * @param out                nodes out of the in-sync copies: writers leave them out, readers skip
 *                           them. Ascending
 * @param joining            nodes catching up: they get every write, readers skip them. Ascending
 * @param leader             the node leading the members, as the answering node knows it;
 *                           {@link #NO_LEADER} when none is known
 * @param voters             the nodes voting on decisions; the others read the decisions
 * @param confirmedMillisAgo milliseconds since the answering node last had its view confirmed by a
 *                           majority of the voters; {@link Long#MAX_VALUE} when never
 * @param serving            whether the answering node serves replicated tables now: its view
 *                           confirmed, its store the one the members recorded, up and in sync
 */
public record MembershipView(boolean replicated, long epoch, List<Integer> down, List<Integer> out,
                             List<Integer> joining, int leader, List<Integer> voters, long confirmedMillisAgo,
                             boolean serving) {
  /** {@link #leader} when no leader is known. */
  public static final int NO_LEADER = -1;

  /** A view whose answering node serves. */
  public MembershipView(boolean replicated, long epoch, List<Integer> down, List<Integer> out, List<Integer> joining,
                        int leader, List<Integer> voters, long confirmedMillisAgo) {
    this(replicated, epoch, down, out, joining, leader, voters, confirmedMillisAgo, true);
  }

  public MembershipView {
    down = List.copyOf(down);
    out = List.copyOf(out);
    joining = List.copyOf(joining);
    voters = List.copyOf(voters);
  }

  /** True when every node is up and in sync: tables may then be created and dropped. */
  public boolean whole() {
    return down.isEmpty() && out.isEmpty() && joining.isEmpty();
  }
}
