"""While this seat's stock draw waits for the others' decryption shares, the
screen says whose share it waits for ("getting your card: waiting for P2's share"), in en/es/fr;
a frozen seat is named, not left behind a bare "getting your card"."""

from __future__ import annotations

from harness import Net, step_of
from p2p_chinchon import view as V
from p2p_chinchon.i18n import Translator
from p2p_chinchon.ui.render import Faces
from p2p_chinchon.ui.screen import TableScreen


def test_a_stock_draw_names_the_seat_whose_share_it_waits_for():
    net = Net(3, seed=4)
    assert net.run(net.expects("draw"))
    me = step_of(net.tables[0]).seat
    t = net.tables[me]
    net.handle(me, t.intent(V.Draw("stock")))  # our draw is signed; the others' shares not yet heard
    step = step_of(t)
    assert step.kind == "draw_share" and step.seat != me
    view = t.view()
    assert view.my_turn and view.step is None and view.awaiting == step.seat
    name = t.lobby.players[step.seat].name
    said = {}
    for lang in ("en", "es", "fr"):
        s = TableScreen(Translator(lang), Faces("french", True, True))
        s.set_view(view)
        said[lang] = s.render_text()
    assert f"getting your card: waiting for {name}'s share" in said["en"], said["en"]
    assert f"tu carta espera la parte de {name}" in said["es"], said["es"]
    assert f"votre carte attend la part de {name}" in said["fr"], said["fr"]
    # one share heard: the next seat's is awaited; all heard: the card is ours, nothing awaited
    while net.q:
        src, dst, frame = net.q.popleft()
        net.handle(dst, net.tables[dst].receive(frame, src))
        if dst == me and step_of(t).kind == "draw_share":
            assert t.view().awaiting == step_of(t).seat != step.seat
    assert step_of(t).kind == "discard" and t.view().awaiting is None and t.view().step == "discard"
