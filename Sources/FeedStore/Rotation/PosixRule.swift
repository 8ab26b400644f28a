/// A POSIX TZ rule, the footer of a TZif file (`CET-1CEST,M3.5.0,M10.5.0/3`): a standard
/// offset and, optionally, a daylight-saving offset with the yearly rules of its start and end.
struct PosixRule: Equatable, Sendable {
    /// Offsets east of UTC, in seconds (POSIX writes them west of UTC).
    let standard: Int64
    let daylight: Int64?
    let start: Change?
    let end: Change?

    /// When in the year a change happens, and at what local time (seconds after midnight).
    struct Change: Equatable, Sendable {
        enum Day: Equatable, Sendable {
            /// `Mm.w.d`: day `d` (0 Sunday) of week `w` (5: the last) of month `m`.
            case monthWeekDay(month: Int, week: Int, weekday: Int)
            /// `Jn`: day 1...365, February 29 never counted.
            case julianNoLeap(Int)
            /// `n`: day 0...365, February 29 counted.
            case zeroBased(Int)
        }

        let day: Day
        let seconds: Int64
    }

    init?(_ text: String) {
        var scan = Scan(Array(text.utf8))
        guard scan.name(), let standardWest = scan.offset() else { return nil }
        standard = -standardWest
        guard !scan.atEnd else {
            daylight = nil
            start = nil
            end = nil
            return
        }
        guard scan.name() else { return nil }
        if let west = scan.offset() { daylight = -west } else { daylight = standard + 3600 }
        guard scan.consume(UInt8(ascii: ",")), let start = scan.change(), scan.consume(UInt8(ascii: ",")),
            let end = scan.change(), scan.atEnd
        else { return nil }
        self.start = start
        self.end = end
    }

    /// The offset east of UTC at `epochSeconds`.
    func offset(at epochSeconds: Int64) -> Int64 {
        guard let daylight, let start, let end else { return standard }
        let year = Civil.year(of: epochSeconds + standard)
        // Start is written in standard local time, end in daylight local time.
        let begins = Civil.epochSeconds(of: start, year: year) - standard
        let ends = Civil.epochSeconds(of: end, year: year) - daylight
        let inDaylight =
            begins < ends
            ? epochSeconds >= begins && epochSeconds < ends
            : epochSeconds >= begins || epochSeconds < ends  // the southern hemisphere
        return inDaylight ? daylight : standard
    }

    /// The characters of a rule.
    private struct Scan {
        let bytes: [UInt8]
        var position = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { position == bytes.count }

        mutating func consume(_ byte: UInt8) -> Bool {
            guard position < bytes.count, bytes[position] == byte else { return false }
            position += 1
            return true
        }

        /// A zone abbreviation: letters, or anything between `<` and `>`.
        mutating func name() -> Bool {
            if consume(UInt8(ascii: "<")) {
                guard let close = bytes[position...].firstIndex(of: UInt8(ascii: ">")) else { return false }
                position = close + 1
                return true
            }
            let start = position
            while position < bytes.count, (0x41...0x5A).contains(bytes[position] & 0xDF) { position += 1 }
            return position - start >= 3
        }

        /// `[+-]hh[:mm[:ss]]`, in seconds (positive west of UTC, as POSIX writes it).
        mutating func offset() -> Int64? {
            var sign: Int64 = 1
            if consume(UInt8(ascii: "-")) { sign = -1 } else { _ = consume(UInt8(ascii: "+")) }
            guard let time = time() else { return nil }
            return sign * time
        }

        /// `hh[:mm[:ss]]`, hours up to 167 (RFC 8536 allows them for the change times).
        mutating func time() -> Int64? {
            var parts: [Int64] = []
            repeat {
                guard let number = number(), number <= 167 else { return nil }
                parts.append(number)
            } while parts.count < 3 && consume(UInt8(ascii: ":"))
            return parts.enumerated().reduce(0) { total, part in
                total + part.element * [3600, 60, 1][part.offset]
            }
        }

        mutating func number() -> Int64? {
            let start = position
            while position < bytes.count, (0x30...0x39).contains(bytes[position]), position - start < 4 {
                position += 1
            }
            guard position > start else { return nil }
            return Int64(String(decoding: bytes[start..<position], as: UTF8.self))
        }

        /// `Mm.w.d`, `Jn` or `n`, then an optional `/time` (default 02:00).
        mutating func change() -> Change? {
            let day: Change.Day
            if consume(UInt8(ascii: "M")) {
                guard let month = number(), consume(UInt8(ascii: ".")), let week = number(),
                    consume(UInt8(ascii: ".")), let weekday = number(), (1...12).contains(month),
                    (1...5).contains(week), (0...6).contains(weekday)
                else { return nil }
                day = .monthWeekDay(month: Int(month), week: Int(week), weekday: Int(weekday))
            } else if consume(UInt8(ascii: "J")) {
                guard let number = number(), (1...365).contains(number) else { return nil }
                day = .julianNoLeap(Int(number))
            } else {
                guard let number = number(), (0...365).contains(number) else { return nil }
                day = .zeroBased(Int(number))
            }
            var seconds: Int64 = 7200
            if consume(UInt8(ascii: "/")) {
                var sign: Int64 = 1
                if consume(UInt8(ascii: "-")) { sign = -1 } else { _ = consume(UInt8(ascii: "+")) }
                guard let time = time() else { return nil }
                seconds = sign * time
            }
            return Change(day: day, seconds: seconds)
        }
    }
}

/// Proleptic Gregorian calendar arithmetic (days from the epoch, and back).
enum Civil {
    /// Days from 1970-01-01 to `year`-`month`-`day`.
    static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let shifted = month <= 2 ? year - 1 : year
        let era = (shifted >= 0 ? shifted : shifted - 399) / 400
        let yearOfEra = shifted - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The year a moment (seconds since the epoch, already in local time) falls in.
    static func year(of epochSeconds: Int64) -> Int64 {
        let days = (epochSeconds >= 0 ? epochSeconds : epochSeconds - 86_399) / 86_400
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let month = (5 * dayOfYear + 2) / 153
        return yearOfEra + era * 400 + (month >= 10 ? 1 : 0)
    }

    static func isLeap(_ year: Int64) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    /// The local moment (seconds since the epoch, local time) of a change in `year`.
    static func epochSeconds(of change: PosixRule.Change, year: Int64) -> Int64 {
        let day: Int64
        switch change.day {
        case .julianNoLeap(let number):
            let index = Int64(number) - 1
            day = days(year: year, month: 1, day: 1) + index + (isLeap(year) && index >= 59 ? 1 : 0)
        case .zeroBased(let number):
            day = days(year: year, month: 1, day: 1) + Int64(number)
        case .monthWeekDay(let month, let week, let weekday):
            let first = days(year: year, month: Int64(month), day: 1)
            // 1970-01-01 was a Thursday (weekday 4).
            let firstWeekday = ((first % 7) + 7 + 4) % 7
            var date = first + (Int64(weekday) - firstWeekday + 7) % 7 + Int64(week - 1) * 7
            let nextMonth =
                month == 12 ? days(year: year + 1, month: 1, day: 1) : days(year: year, month: Int64(month) + 1, day: 1)
            while date >= nextMonth { date -= 7 }  // week 5: the last such weekday
            day = date
        }
        return day * 86_400 + change.seconds
    }
}
