#!/bin/sh
# An --on-publish hook that makes an Android app's WidgetBridge folder the published group folder
# and asks the widget to redraw:
#
#   ANDROID_PACKAGE=com.example.quotes ANDROID_RECEIVER=com.example.quotes/.QuoteWidgetReceiver \
#     bash scripts/run.sh --on-publish scripts/android-sync.sh
#
# The app's private `files/<dir>` (default `files/widgetbridge`, WidgetBridge's directoryName)
# ends up holding what the server's group folder holds: `current.json` equal to the server's and
# `generations/` beside it, nothing nested. Only the group named like that folder is synced
# (`widgetbridge` by default; ANDROID_GROUP names another); other groups' changes are ignored.
# Steps, so the widget never finds no feed and never a generation being written:
#   1. ask the device which generations it has; `adb push` the ones it lacks and the pointer to
#      a fresh path under /data/local/tmp (never an existing folder: adb would copy a folder
#      *into* one);
#   2. `run-as` the app: copy each new generation in under a `.tmp` name (readers skip those)
#      and rename it into place, write the pointer beside its final name and rename it over
#      `current.json`, then remove generations the server no longer has;
#   3. remove the temporary path; broadcast the update.
# After a DELETE (FEED_EVENT=delete) the pointer goes first, then the generations.
#
# adb joins the words after `adb shell` with single spaces and the device's shell parses the
# result again, so every device command here is one string, and everything put into it is
# checked to be free of quotes and spaces first.
#
# Environment:
#   ANDROID_PACKAGE      the app's package (required; `run-as` needs a debuggable build)
#   ANDROID_RECEIVER     the widget's receiver component, `package/.Class` (no broadcast without it)
#   ANDROID_WIDGET_IDS   comma-separated appWidgetIds: send APPWIDGET_UPDATE with them, which an
#                        AppWidgetProvider acts on; without them, Glance's DEBUG_UPDATE action
#   ANDROID_DIR          the folder under the app's data dir (default files/widgetbridge)
#   ANDROID_GROUP        the server's group synced there (default: the folder's name)
#   ANDROID_TMP          the device's scratch folder (default /data/local/tmp)
#   ANDROID_SERIAL       which device (adb reads it itself); ADB: the adb command (default adb)
set -eu

fail() { echo "android-sync: $*" >&2; exit 1; }
# Only names that survive adb's re-joining and the device shell unquoted.
plain() { case "$1" in '' | *[!A-Za-z0-9._/,:-]*) fail "$2 '$1' has characters adb would mangle" ;; esac; }

: "${FEED_GROUP_DIR:?android-sync.sh runs as feed-server --on-publish (FEED_GROUP_DIR is unset)}"
package=${ANDROID_PACKAGE:?set ANDROID_PACKAGE to the app package, e.g. com.example.quotes}
dir=${ANDROID_DIR:-files/widgetbridge}
scratch=${ANDROID_TMP:-/data/local/tmp}
adb=${ADB:-adb}
plain "$package" ANDROID_PACKAGE
plain "$dir" ANDROID_DIR
plain "$scratch" ANDROID_TMP
case "$dir" in /* | *..*) fail "ANDROID_DIR '$dir' must be a path inside the app's data folder" ;; esac
group=${ANDROID_GROUP:-$(basename "$dir")}
if [ "${FEED_GROUP:-}" != "$group" ]; then
  echo "android-sync: group ${FEED_GROUP:-?} is not $group (ANDROID_GROUP); nothing synced"
  exit 0
fi

device() { "$adb" shell "$1"; }
in_app() { device "run-as $package sh -c '$1'"; }

if [ "${FEED_EVENT:-publish}" = delete ]; then
  in_app "rm -f $dir/current.json && rm -rf $dir/generations"
else
  [ -f "$FEED_GROUP_DIR/current.json" ] || fail "no current.json in $FEED_GROUP_DIR"
  keep=""
  for generation in "$FEED_GROUP_DIR"/generations/*/; do
    [ -d "$generation" ] || continue
    name=$(basename "$generation")
    case "$name" in *.tmp) continue ;; esac
    plain "$name" "generation"
    keep="$keep $name"
  done
  # What the device has already: generations never change once written, so they are not sent again.
  present=" $(in_app "ls $dir/generations 2>/dev/null || true" | tr -d '\r' | tr '\n' ' ') "
  temporary="$scratch/feed-server-sync-$(date +%s)-$$"
  trap 'device "rm -rf $temporary" >/dev/null 2>&1 || true' EXIT
  new=""
  for name in $keep; do
    case "$present" in *" $name "*) continue ;; esac
    new="$new $name"
    "$adb" push "$FEED_GROUP_DIR/generations/$name" "$temporary/generations/$name" >/dev/null
  done
  "$adb" push "$FEED_GROUP_DIR/current.json" "$temporary/current.json" >/dev/null
  # Pushed as the shell user; the app's user reads them.
  device "chmod -R a+rX $temporary"
  # Each new generation copied under a .tmp name and renamed into place, then the pointer renamed
  # over the old one, then the generations the server no longer has removed.
  copy=""
  for name in $new; do
    copy="$copy rm -rf $dir/generations/$name.tmp; cp -R $temporary/generations/$name $dir/generations/$name.tmp; \
mv $dir/generations/$name.tmp $dir/generations/$name;"
  done
  prune="for g in $dir/generations/*; do case \" $keep \" in *\" \${g##*/} \"*) ;; *) rm -rf \"\$g\" ;; esac; done"
  in_app "set -e; mkdir -p $dir/generations; $copy \
cp $temporary/current.json $dir/current.json.sync; mv -f $dir/current.json.sync $dir/current.json; $prune"
  device "rm -rf $temporary"
  trap - EXIT
fi

if [ -n "${ANDROID_RECEIVER:-}" ]; then
  plain "$ANDROID_RECEIVER" ANDROID_RECEIVER
  if [ -n "${ANDROID_WIDGET_IDS:-}" ]; then
    plain "$ANDROID_WIDGET_IDS" ANDROID_WIDGET_IDS
    device "am broadcast -a android.appwidget.action.APPWIDGET_UPDATE -n $ANDROID_RECEIVER \
--eia appWidgetIds $ANDROID_WIDGET_IDS" >/dev/null
  else
    device "am broadcast -a androidx.glance.appwidget.action.DEBUG_UPDATE -n $ANDROID_RECEIVER" >/dev/null
  fi
fi
echo "android-sync: ${FEED_EVENT:-publish} of $FEED_GROUP ${FEED_GENERATION_ID:-} synced to $package/$dir"
