#if GStreamer
import CamHAL
@testable import CamHALGStreamer
import Foundation
import Testing

/// The source-description allowlist: the bypasses of the old class-based denylist
/// are refused naming the element and the rule; local files need the app's opt-in.
@Suite struct SourceAllowlistTests {
    /// The refusal's reason, or nil when the description was accepted or failed otherwise.
    func refusal(_ description: String, policy: GStreamerBackend.SourcePolicy = .default) -> String? {
        do {
            _ = try GStreamerSource.description(description, policy: policy)
            return nil
        } catch {
            guard case .invalidArgument(let name, _, let reason) = error, name == "source description" else { return nil }
            return reason
        }
    }

    /// Each reached a local listener (or sent an HTTP GET) through the old denylist.
    @Test(arguments: [
        ("rfbsrc host=127.0.0.1 port=5999", "rfbsrc"),
        ("rtmp2src location=rtmp://127.0.0.1:1935/live/x", "rtmp2src"),
        ("rtmpsrc location=rtmp://127.0.0.1:1935/live/x ! flvdemux ! h264parse ! avdec_h264", "rtmpsrc"),
        ("dataurisrc uri=\"data:application/vnd.apple.mpegurl;base64,I0VYVE0zVQo=\" ! hlsdemux ! decodebin", "dataurisrc"),
        ("filesrc location=/tmp/list.m3u8 ! hlsdemux ! decodebin", "hlsdemux"),
        ("filesrc location=/tmp/x.mkv ! decodebin", "decodebin"),
        ("videotestsrc ! filesink location=/tmp/camhal-allowlist-sink", "filesink"),
        ("videotestsrc ! tee ! fakesink", "tee"),
        ("rtmp://127.0.0.1:1935/live/x ! flvdemux", "rtmp2src"),
        ("videotestsrc ! ( identity )", "bin"),
        ("souphttpsrc location=http://127.0.0.1:1/x ! jpegdec", "souphttpsrc"),
    ])
    func bypassIsRefusedNamingTheElement(description: String, element: String) throws {
        let reason = try #require(refusal(description, policy: .allowingLocalFiles), "\(description) was accepted")
        #expect(reason.contains("'\(element)'"), "\(description): \(reason)")
        #expect(reason.contains("allowlist"), "the rule is named: \(reason)")
        #expect(!FileManager.default.fileExists(atPath: "/tmp/camhal-allowlist-sink"))
    }

    @Test func localFilesNeedTheOptIn() throws {
        for (description, element) in [("filesrc location=/etc/shadow ! rawvideoparse width=8 height=8 format=gray8", "filesrc"),
                                       ("fdsrc fd=0 ! rawvideoparse width=8 height=8 format=gray8", "fdsrc"),
                                       ("multifilesrc location=/tmp/img%05d.png ! pngdec", "multifilesrc"),
                                       ("videotestsrc ! videoconvert ! gdkpixbufoverlay location=/etc/hostname", "gdkpixbufoverlay")] {
            let reason = try #require(refusal(description), "\(description) was accepted without the opt-in")
            #expect(reason.contains("'\(element)'") && reason.contains("allowsLocalFiles"), "\(reason)")
            #expect(refusal(description, policy: .allowingLocalFiles) == nil, "\(description) is accepted with the opt-in")
        }
    }

    @Test func uriPropertiesAreRefusedEvenWithTheOptIn() throws {
        let reason = try #require(refusal("filesrc location=http://127.0.0.1:1/x.png ! pngdec", policy: .allowingLocalFiles))
        #expect(reason.contains("'location'") && reason.contains("'filesrc'") && reason.contains("URI"), "\(reason)")
        let device = try #require(refusal("v4l2src device=/etc/passwd"))
        #expect(device.contains("'v4l2src'") && device.contains("/dev/video"), "\(device)")
    }

    @Test func allowedDescriptionsPass() {
        for d in ["videotestsrc", "videotestsrc pattern=ball is-live=true ! videoflip video-direction=horiz",
                  "videotestsrc ! video/x-raw,width=320 ! videoscale ! videorate ! videocrop left=2 ! queue ! identity",
                  "v4l2src device=/dev/video2 ! videoconvert"] {
            #expect(refusal(d) == nil, "\(d)")
        }
    }

    /// An 11 kB description blocked the calling thread for over 40 s inside GStreamer's parser.
    @Test func longDescriptionsAreRefusedAtOnce() throws {
        let long = "videotestsrc ! " + String(repeating: "identity ! ", count: 1000) + "videoconvert"
        let reason = try #require(refusal(long))
        #expect(reason.contains("at most 2048"), "\(reason)")
        let many = "videotestsrc ! " + String(repeating: "queue ! ", count: 40) + "videoconvert"
        let reason2 = try #require(refusal(many))
        #expect(reason2.contains("elements") && reason2.contains("at most 24"), "\(reason2)")
        let unlinked = "videotestsrc " + String(repeating: "queue ", count: 40)
        // Unlinked elements are outside the accepted grammar now (DescriptionSyntax), refused
        // before the parser or the element count sees them.
        let reason3 = try #require(refusal(unlinked))
        #expect(reason3.contains("'queue' is not property=value"), "\(reason3)")
    }

    /// Found by Fuzz/FuzzSourceDescription: GStreamer 1.22's parser crashes the process (SIGSEGV)
    /// on `x.:y.`, also in an app's trusted pipeline. Would catch: the pre-parse screen removed.
    @Test func parserCrashingSequenceIsRefusedBeforeParsing() throws {
        for d in ["x.:y.", "d.:r.z", "videotestsrc ! x.:y.z"] {
            #expect { try GStreamerSource.description(d, allowPipeline: true) } throws: { e in "\(e)".contains("crashes GStreamer") }
        }
    }

    /// Found by Fuzz/FuzzSourceDescription in CI: two elements with one name let GStreamer 1.22's
    /// parser link a reference into a loop, and the caps query recurses until the stack
    /// overflows (SIGSEGV), also in an app's trusted pipeline. Would catch: the duplicate-name
    /// screen removed, or a spelling of `name=` it misses.
    @Test func duplicateElementNamesAreRefusedBeforeParsing() throws {
        let crashers = [
            "videotestsrc ! (tee name=t t. ! queue ! identity ) ! tee name=t t. ! queue",
            "videotestsrc ! (tee name=t t. ! queue ) ! tee name=t",
            "videotestsrc ! (tee name = t t. ! queue ) ! tee name=\"t\"",
            "videotestsrc ! (tee name='t' t. ! queue ) ! tee  name =t",
        ]
        for d in crashers {
            #expect { try GStreamerSource.description(d, allowPipeline: true) } throws: { e in
                "\(e)".contains("names two elements 't'")
            }
        }
        // Not names: a property value that says name=, and different names.
        #expect(GStreamerParserCrashers.elementNames(in: "textoverlay text=\"name=t\" name=a ! identity name=b") == ["a", "b"])
        #expect(GStreamerParserCrashers.duplicateName(in: "videotestsrc name=src ! tee name=t t. ! queue name=q") == nil)
        #expect(GStreamerParserCrashers.elementNames(in: "x filename=t name=u\\ v") == ["u v"])
    }

    /// Found by Fuzz/FuzzSourceDescription (CI's SIGSEGV at libgstreamer+0x36b04): a link between
    /// two references that resolve to nothing, or a reference in a bin holding an unknown element,
    /// dereferences NULL in GStreamer 1.22's parser, also in an app's trusted pipeline; so no
    /// reference is accepted. Would catch: references not screened, or a screen that takes a
    /// property value, caps or a file name with a dot for a reference.
    @Test func elementReferencesAreRefusedBeforeParsing() throws {
        for d in [
            "x a. ! b.", "p.!p.", "videotestsrc ! identity  a.src ! b.sink",
            "videotestsrc ! (tee name=t t. ! queue ! idenvaapi) ! d:eze", "videotestsrc ! tee name=t  t. ! queue ! identity",
        ] {
            #expect { try GStreamerSource.description(d, allowPipeline: true) } throws: { e in
                "\(e)".contains("element references are not accepted")
            }
        }
        #expect(GStreamerParserCrashers.referencedNames(in: "tee name=t t. ! queue t.src_1 ! q.") == ["t", "t", "q"])
        #expect(GStreamerParserCrashers.referencedNames(
            in: "filesrc location=a.mp4 ! video/x-raw,framerate=30/1 ! textoverlay text=\"a. b.\" ! x .src") == [])
        #expect(GStreamerParserCrashers.unresolvedReference(in: "videotestsrc ! tee name=t t. ! queue") == nil)
    }

    /// Found by Fuzz/FuzzSourceDescription in CI (a fourth parser crash, SIGSEGV at
    /// libgstreamer+0x36b04): a quote inside a word (`name-t't.`) hid a reference from the
    /// reference screen. Everything outside a linear chain of elements and caps is now refused
    /// before parsing, in every mode. Would catch: the grammar screen removed or loosened to let
    /// groups, references, stray quotes or control characters through.
    @Test func onlyALinearChainReachesTheParser() throws {
        for (d, part) in [
            ("\u{3}vitsrc ! (tee name-t't. ! queue ! idenvaapi) ! \u{1d}]d:eze", "control character"),
            ("vitsrc ! (tee name-t't. ! queue ! idenvaapi) ! d:eze", "never closed"),
            ("vitsrc ! (tee name-t't'. ! queue ! idenvaapi) ! d:eze", "group"),
            ("videotestsrc ! tee name-t't'. ! queue", "not property=value"),
            ("videotestsrc ! identity name=a'b'", "quotes and parentheses only inside a quoted value"),
            ("videotestsrc pattern=\"ball", "never closed"),
            ("videotestsrc ! ! identity", "nothing between"),
            ("videotestsrc ! video/x-raw(memory:x) ! identity", "parenthesis only as a type"),
        ] {
            #expect { try GStreamerSource.description(d, allowPipeline: true) } throws: { e in "\(e)".contains(part) }
        }
        for d in ["videotestsrc pattern = ball ! video/x-raw, width=(int)320, framerate=30/1 ! identity",
                  "videotestsrc ! textoverlay text=\"a (b) ! 'c'\" font-desc='Sans 8' ! videoconvert",
                  "videotestsrc ! capsfilter caps=\"video/x-raw,width=(int)64\" ! queue name=q1"] {
            #expect(DescriptionSyntax.problem(in: d) == nil, "\(d): \(DescriptionSyntax.problem(in: d) ?? "")")
            #expect(refusal(d) == nil, "\(d)")
        }
    }
}
#endif
