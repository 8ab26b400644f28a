import FeedStore

/// The problems of widget profiles (`/feeds/{group}/profile`, the timeline's profile parameters).
extension Problem {
    /// 422 for a profile that is not valid; `member` names the member at fault.
    static func invalidProfile(_ error: ProfileError) -> Problem {
        Problem(
            status: 422, type: "invalid-profile", title: "Invalid widget profile", detail: error.detail,
            extensions: error.member.isEmpty ? [] : [("member", .string(error.member))])
    }

    /// 404 for a group without a profile.
    static func noProfile(_ group: String) -> Problem {
        Problem(
            status: 404, type: "no-profile", title: "No widget profile",
            detail:
                "Group '\(group)' has no widget profile; PUT one such as {\"items\":\"/quotes\",\"title\":\"/text\"}.")
    }

    /// 500 for a `profile.json` on disk that cannot be read or is not a profile.
    static func unreadableProfile(_ error: ProfileError) -> Problem {
        Problem(
            status: 500, type: "unreadable-profile", title: "Stored profile unreadable",
            detail: error.detail + " PUT a new profile or DELETE it.")
    }
}
