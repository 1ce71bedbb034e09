#include "rpc/probe_replies.h"

#include <algorithm>
#include <utility>

namespace secmode::rpc {

using common::Bytes;
using common::ByteView;
using common::Result;

bool MessageXid(ByteView message, uint32_t* xid) {
  if (message.size() < 4) return false;
  *xid = (uint32_t{message[0]} << 24) | (uint32_t{message[1]} << 16) | (uint32_t{message[2]} << 8) |
         message[3];
  return true;
}

void ProbeReplies::Reset() {
  reader_ = RecordReader(kProbeMaxRecord);
  pending_.clear();
}

void ProbeReplies::Sent(uint32_t xid) {
  if (pending_.size() == kProbeMaxPending) {
    if (pending_.front().has_reply) Drop(pending_.front().reply.size());
    pending_.pop_front();
  }
  pending_.push_back(Pending{xid, false, {}});
}

bool ProbeReplies::Take(uint32_t xid, Bytes* record) {
  auto p = std::find_if(pending_.begin(), pending_.end(),
                        [&](const Pending& q) { return q.xid == xid && q.has_reply; });
  if (p == pending_.end()) return false;
  *record = std::move(p->reply);
  pending_.erase(p);
  return true;
}

Result<bool> ProbeReplies::Next(uint32_t xid, Bytes* record) {
  if (Take(xid, record)) return true;
  while (true) {
    ByteView rec;
    SECMODE_ASSIGN_OR_RETURN(bool got, reader_.Next(&rec));
    if (!got) return false;
    uint32_t rec_xid = 0;
    auto p = pending_.end();
    if (MessageXid(rec, &rec_xid)) {
      p = std::find_if(pending_.begin(), pending_.end(),
                       [&](const Pending& q) { return q.xid == rec_xid; });
    }
    if (p == pending_.end() || p->has_reply) {
      Drop(rec.size());
      continue;
    }
    if (rec_xid == xid) {
      record->assign(rec.begin(), rec.end());
      pending_.erase(p);
      return true;
    }
    p->reply.assign(rec.begin(), rec.end());
    p->has_reply = true;
  }
}

size_t ProbeReplies::kept() const {
  return static_cast<size_t>(std::count_if(pending_.begin(), pending_.end(),
                                           [](const Pending& p) { return p.has_reply; }));
}

size_t ProbeReplies::kept_bytes() const {
  size_t n = 0;
  for (const Pending& p : pending_) n += p.reply.size();
  return n;
}

}  // namespace secmode::rpc
