from django.urls import path

from teams import views

urlpatterns = [
    path("teams", views.TeamsView.as_view(), name="teams"),
    path("teams/<str:team_id>", views.TeamView.as_view(), name="team"),
    path("teams/<str:team_id>/members", views.MembersView.as_view(), name="team-members"),
    path("teams/<str:team_id>/members/<str:user_id>", views.MemberView.as_view(),
         name="team-member"),
    path("teams/<str:team_id>/invitations", views.InvitationsView.as_view(),
         name="team-invitations"),
    path("teams/<str:team_id>/invitations/<str:invitation_id>", views.InvitationView.as_view(),
         name="team-invitation"),
    path("teams/<str:team_id>/audit", views.TeamAuditView.as_view(), name="team-audit"),
    path("invitations/accept", views.AcceptView.as_view(), name="invitation-accept"),
]
