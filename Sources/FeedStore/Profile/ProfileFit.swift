/// Whether a profile finds what it names in a payload: a profile stored for a group that has a
/// feed must, so a pointer or a template field that matches nothing is refused when it is sent
/// rather than found later as one warning per item.
extension WidgetItems {
    /// The first member, in the profile's order, that finds nothing in the payload, as a refusal
    /// naming it; nil when each finds something. The members read below an item (title, subtitle,
    /// image) are judged only when the array has items: an empty array shows none of them.
    public func memberFindingNothing() -> ProfileError? {
        guard let array else {
            return ProfileError("items", "'\(profile.items.text)' names no array in the payload.")
        }
        var fit = Fit(profile: profile)
        array.forEachElement { index, node in fit.add(item(node, index: index)) }
        if fit.count > 0, let refusal = fit.refusal(items: profile.items.text) { return refusal }
        if let empty = profile.empty, emptyText == nil {
            return ProfileError("empty", "'\(empty.text)' finds no text in the payload.")
        }
        return nil
    }

    /// What the items seen so far show of each member.
    private struct Fit {
        let profile: WidgetProfile
        var count = 0
        var titleFound = false
        var subtitleFound = false
        var imageNamed = false
        /// Why the first item's image names no file, for the refusal.
        var firstUnnamed: (pointer: String, why: String)?

        init(profile: WidgetProfile) { self.profile = profile }

        mutating func add(_ item: WidgetItems.Item) {
            count += 1
            titleFound = titleFound || item.title != nil
            subtitleFound = subtitleFound || item.subtitle != nil
            if case .unnamed(let why) = item.image {
                if firstUnnamed == nil { firstUnnamed = (item.pointer, why) }
            } else {
                imageNamed = true
            }
        }

        func refusal(items: String) -> ProfileError? {
            let among = "any of the \(count) item\(count == 1 ? "" : "s") at \(items)"
            if let title = profile.title, !titleFound {
                return ProfileError("title", "'\(title.text)' finds no text in \(among).")
            }
            if let subtitle = profile.subtitle, !subtitleFound {
                return ProfileError("subtitle", "'\(subtitle.text)' finds no text in \(among).")
            }
            if let image = profile.image, !imageNamed, let first = firstUnnamed {
                return ProfileError(
                    "image", "'\(image.text)' names no file for \(among): the item at \(first.pointer) \(first.why).")
            }
            return nil
        }
    }
}
