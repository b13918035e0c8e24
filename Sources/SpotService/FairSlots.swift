/// Who may run next among users sharing `width` slots: one user holds at most `share` of
/// them, and waiting work is served round-robin across users (each user's own work in
/// arrival order), so one user's queue cannot keep another's waiting. Plain state, no
/// concurrency: `OffPoolRunner` drives it.
struct FairSlots<Ticket> {
    let width: Int
    let share: Int
    private var holding: [String: Int] = [:]
    private var held = 0
    private var waiting: [String: [Ticket]] = [:]
    /// Users with waiting work, the next to be served first.
    private var turns: [String] = []

    /// `width` slots (at least 1), at most `share` (at least 1, at most `width`) per user.
    init(width: Int, share: Int) {
        self.width = max(1, width)
        self.share = min(max(1, share), self.width)
    }

    /// Work waiting for a slot, all users together.
    var waitingCount: Int { waiting.values.reduce(0) { $0 + $1.count } }

    /// `ticket` of `user` asks for a slot: `true` when it holds one now, `false` when it waits
    /// (a later `release` hands it out).
    mutating func request(_ ticket: Ticket, for user: String) -> Bool {
        if held < width, holding[user, default: 0] < share {
            take(for: user)
            return true
        }
        if waiting[user, default: []].isEmpty { turns.append(user) }
        waiting[user, default: []].append(ticket)
        return false
    }

    /// `user` gives a slot back; returns the waiting tickets that now hold slots, with their users.
    mutating func release(for user: String) -> [(ticket: Ticket, user: String)] {
        holding[user, default: 1] -= 1
        if holding[user] == 0 { holding[user] = nil }
        held -= 1
        var started: [(ticket: Ticket, user: String)] = []
        while held < width, let turn = turns.firstIndex(where: { holding[$0, default: 0] < share }) {
            let next = turns.remove(at: turn)
            let ticket = waiting[next]!.removeFirst()
            if waiting[next]!.isEmpty { waiting[next] = nil } else { turns.append(next) }
            take(for: next)
            started.append((ticket, next))
        }
        return started
    }

    private mutating func take(for user: String) {
        holding[user, default: 0] += 1
        held += 1
    }
}
