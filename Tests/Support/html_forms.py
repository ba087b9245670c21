"""Reading the pages of a sign-in without a browser, for the Python runners that drive the Apple ID simulator with
plain HTTP (OpenID client, webhooks). Standard library only."""
import html.parser


class Form(html.parser.HTMLParser):
    """The first form of a page: its action and its named inputs."""

    def __init__(self, text):
        super().__init__()
        self.action, self.fields = None, {}
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form" and self.action is None:
            self.action = attrs.get("action")
        if tag == "input" and attrs.get("name") and attrs.get("type") in ("hidden", None):
            self.fields[attrs["name"]] = attrs.get("value", "")


class SignInLink(html.parser.HTMLParser):
    """The bridge's login page: the href of its Sign in with Apple link."""

    def __init__(self, text):
        super().__init__()
        self.href = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "a" and attrs.get("id") == "apple-signin":
            self.href = attrs.get("href")
